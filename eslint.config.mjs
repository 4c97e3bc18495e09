// One linter for every workspace: typescript-eslint's recommended rules (without type information, so that
// it needs no build) and the 120-column limit. `make lint` runs it; CI runs it before the tests.
import fs from 'node:fs';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import stylistic from '@stylistic/eslint-plugin';

// Files written before the limit that still hold longer lines; a file leaves the list once it is wrapped,
// and every other file is held to 120 columns.
const longLines = JSON.parse(fs.readFileSync(new URL('./eslint.long-lines.json', import.meta.url), 'utf8'));

export default defineConfig(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', 'data/**', '**/*.js', '**/*.mjs'] },
  tseslint.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true }],
      // A leading underscore marks a value left out on purpose (a destructured field dropped from a copy).
      '@typescript-eslint/no-unused-vars': ['error', {
        argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none',
        ignoreRestSiblings: true,
      }],
    },
  },
  // Tests read response bodies whose shape the assertions themselves check.
  { files: ['*/test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  // Generated from the contract's permissions.json: one record per line, as the data has it.
  { files: ['shared/src/permissions/data.ts', ...longLines], rules: { '@stylistic/max-len': 'off' } },
);
