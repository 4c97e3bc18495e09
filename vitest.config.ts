import path from 'node:path';
import { defineConfig } from 'vitest/config';

const root = __dirname;

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@lms\/shared$/, replacement: path.join(root, 'shared/src/index.ts') },
      { find: /^@lms\/db$/, replacement: path.join(root, 'db/src/index.ts') },
    ],
  },
  test: {
    include: ['{shared,db,central,classroom,scripts}/test/**/*.test.ts'],
    environment: 'node',
    globalSetup: [path.join(root, 'vitest.global-setup.ts')],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
