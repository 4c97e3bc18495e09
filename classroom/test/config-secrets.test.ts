import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadBackupKey, loadConfig } from '../src/config';

const realSecrets = {
  JWT_SECRET: crypto.randomBytes(32).toString('base64'),
  SERVER_SYNC_KEY: crypto.randomBytes(32).toString('hex'),
};
const prod = (extra: Record<string, string> = {}) => ({ NODE_ENV: 'production', ...realSecrets, ...extra });

describe('classroom secrets', () => {
  it('refuses a weak or placeholder BACKUP_KEY at start and in the backup commands, naming it', () => {
    for (const load of [loadConfig, loadBackupKey]) {
      expect(() => load(prod({ BACKUP_KEY: 'abc' }))).toThrow(
        /^BACKUP_KEY is too weak for NODE_ENV=production: 3 hex digits, fewer than 64.*ALLOW_WEAK_BACKUP_KEY=1/,
      );
      expect(() => load(prod({ BACKUP_KEY: 'backup-key-backup-key-backup-key-backup-key' })))
        .toThrow(/BACKUP_KEY is too weak/);
      expect(() => load(prod({ BACKUP_KEY: 'abc', ALLOW_WEAK_BACKUP_KEY: '1' }))).not.toThrow();
    }
    expect(() => loadConfig(prod({ BACKUP_KEY: 'change-me' }))).toThrow(/BACKUP_KEY must be set to a real secret/);
    const strong = crypto.randomBytes(32).toString('base64url');
    expect(loadBackupKey(prod({ BACKUP_KEY: strong }))).toBe(strong);
    expect(loadBackupKey(prod())).toBe(realSecrets.JWT_SECRET);
    expect(loadBackupKey({ NODE_ENV: 'test', BACKUP_KEY: 'abc' })).toBe('abc');
  });

  it('refuses any two of its secrets being equal, naming both and never the value', () => {
    const names = ['JWT_SECRET', 'SERVER_SYNC_KEY', 'BACKUP_KEY', 'METRICS_TOKEN'];
    for (const [i, a] of names.entries()) {
      for (const b of names.slice(i + 1)) {
        const value = crypto.randomBytes(32).toString('base64url');
        let message = '';
        try {
          loadConfig(prod({ [a]: value, [b]: value }));
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message).toBe(
          `${a} and ${b} are the same value: each secret must be a random value of its own when NODE_ENV=production`,
        );
        expect(message).not.toContain(value);
      }
    }
    expect(() => loadBackupKey(prod({ BACKUP_KEY: realSecrets.SERVER_SYNC_KEY })))
      .toThrow('BACKUP_KEY and SERVER_SYNC_KEY are the same value');
    // Each strong and its own: the service starts.
    const own = () => crypto.randomBytes(32).toString('base64url');
    expect(loadConfig(prod({ BACKUP_KEY: own(), METRICS_TOKEN: own() })).weakSecrets).toEqual([]);
    expect(loadConfig({ NODE_ENV: 'test', METRICS_TOKEN: 'same', JWT_SECRET: 'same' }).nodeEnv).toBe('test');
  });

  it('refuses a weak METRICS_TOKEN outside development and test', () => {
    expect(() => loadConfig(prod({ METRICS_TOKEN: 'metrics' }))).toThrow(/METRICS_TOKEN is too weak/);
  });
});
