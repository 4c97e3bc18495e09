import crypto from 'node:crypto';
import net from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROLE_IDS, createLogger } from '@lms/shared';
import { warnMailNotSent } from '../src/auth/mail';
import { makeApp, type TestApp } from './helpers';
import { createStaff } from './accounts';

// A minimal SMTP server on loopback that keeps each message it is given.
const messages: string[] = [];
let smtp: net.Server;
let t: TestApp;

beforeAll(async () => {
  smtp = net.createServer((socket) => {
    let data = false;
    let buffer = '';
    socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      if (data) {
        const end = buffer.indexOf('\r\n.\r\n');
        if (end < 0) return;
        messages.push(buffer.slice(0, end));
        buffer = buffer.slice(end + 5);
        data = false;
        socket.write('250 queued\r\n');
      }
      let nl;
      while (!data && (nl = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'EHLO' || cmd === 'HELO') socket.write('250 test\r\n');
        else if (cmd === 'DATA') { data = true; socket.write('354 go\r\n'); }
        else if (cmd === 'QUIT') { socket.end('221 bye\r\n'); }
        else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const port = (smtp.address() as net.AddressInfo).port;
  t = await makeApp({
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    MAIL_FROM: 'lms@example.org',
    UI_URL: 'https://admin.example.org/',
  });
  await createStaff(t.tdb.db, { lmsusername: 'mailme@example.org', roleids: [ROLE_IDS.admin] });
});
afterAll(async () => {
  await t.tdb.dispose();
  await new Promise((r) => smtp.close(r));
});

describe('mail by SMTP when SMTP_URL is set', () => {
  it('sends the password-reset link to the staff address', async () => {
    const res = await request(t.app).post('/auth/forgotpassword').send({ lmsusername: 'mailme@example.org' });
    expect(res.body).toEqual({ error: false, data: 'Password reset mail sent.' });
    await vi.waitFor(() => expect(messages).toHaveLength(1), { timeout: 5000 });
    expect(messages[0]).toMatch(/^To: mailme@example.org/m);
    expect(messages[0]).toMatch(/^From: lms@example.org/m);
    const link = /https:\/\/admin\.example\.org\/auth\/changepassword\/([\w-]+\.[\w-]+\.[\w-]+)/.exec(
      messages[0].replace(/=\r\n/g, ''),
    );
    expect(link).not.toBeNull();
    const valid = await request(t.app).post(`/auth/token/validate/changepassword?changepasswordtoken=${link![1]}`);
    expect(valid.body.data).toBe(true);
  });
});

describe('without SMTP_URL', () => {
  const secrets = () => ({
    JWT_SECRET: crypto.randomBytes(32).toString('base64url'),
    APPLICATION_API_KEY: crypto.randomBytes(32).toString('base64url'),
    SERVER_SYNC_KEY: crypto.randomBytes(32).toString('base64url'),
    RPI_SECRET: crypto.randomBytes(32).toString('base64url'),
  });
  const capture = () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger(
      { name: 'mail-test', level: 'info' },
      {
        write: (l: string) => {
          lines.push(JSON.parse(l));
        },
      },
    );
    return { lines, logger };
  };

  it('in production logs that a reset mail was not sent, never its link, and warns at start', async () => {
    const { lines, logger } = capture();
    const p = await makeApp({ NODE_ENV: 'production', ...secrets(), UI_URL: 'https://admin.example.org/' }, t.tdb, {
      logger,
    });
    const res = await request(p.app).post('/auth/forgotpassword').send({ lmsusername: 'mailme@example.org' });
    expect(res.body).toEqual({ error: false, data: 'Password reset mail sent.' });
    await vi.waitFor(() => expect(lines.some((l) => l.msg === 'mail not sent: SMTP_URL is not set')).toBe(true), {
      timeout: 5000,
    });
    const text = JSON.stringify(lines);
    expect(text).not.toMatch(/changepassword/i);
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
    expect(lines.find((l) => l.msg === 'mail not sent: SMTP_URL is not set')).toMatchObject({
      level: 40,
      mail: { to: 'mailme@example.org' },
    });

    const start = capture();
    warnMailNotSent(p.config, start.logger);
    expect(start.lines).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringContaining('SMTP_URL is not set') }),
    ]);
    const withSmtp = capture();
    warnMailNotSent({ ...p.config, smtpUrl: 'smtp://127.0.0.1:25' }, withSmtp.logger);
    expect(withSmtp.lines).toEqual([]);
  });

  it('in development and test writes the whole mail to the log (demos take the link from ' +
      'there), without a start warning', async () => {
    const { lines, logger } = capture();
    const d = await makeApp({ UI_URL: 'https://admin.example.org/' }, t.tdb, { logger });
    await request(d.app).post('/auth/forgotpassword').send({ lmsusername: 'mailme@example.org' });
    await vi.waitFor(() => expect(JSON.stringify(lines)).toMatch(/admin\.example\.org\/auth\/changepassword\/eyJ/), {
      timeout: 5000,
    });
    warnMailNotSent(d.config, logger);
    expect(lines.some((l) => String(l.msg).includes('SMTP_URL is not set:'))).toBe(false);
  });
});
