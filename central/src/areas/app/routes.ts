import type { Response } from 'express';
import { carriesToken, noInput, publicGate } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { buildInfo } from '../../version';
import { teacherUploadCsv, userUploadCsv } from './csv-templates';
import { templateTypes } from './templatetypes';

const build = buildInfo();

function sendTemplate(res: Response, name: string, body: string): void {
  // The original labelled these application/json; the admin UI saves the body as a blob either way.
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment;filename=${name}`);
  res.send(body);
}

export const appRoutes: CentralRoute[] = [
  route('GET', '/', publicGate(), scope.global, noInput, ({ res }) => {
    res.type('text/plain').send('FORTYK API ***');
  }, { summary: 'Liveness banner (plain text)' }),
  route('GET', '/version', publicGate(), scope.global, noInput, ({ config, req, res }) => {
    // The version is public (the spec's); the build's commit and time tell a stranger which fixes the
    // running code lacks, so only the operator's scraper (METRICS_TOKEN) is given them.
    const operator = carriesToken(req, config.metricsToken);
    res.vary('Authorization');
    if (operator) {
      res.setHeader('X-Build', build.build);
      res.setHeader('Cache-Control', 'no-store');
    }
    // Plain text for existing scripts; JSON (with the build for the operator) for a client that asks for it.
    if (!req.accepts('text/plain') && req.accepts('json')) {
      res.json({ error: false, data: operator ? build : { version: build.version } });
    } else {
      res.type('text/plain').send(build.version);
    }
  }, { summary: 'Running version (plain text, or JSON when only JSON is accepted); the build with METRICS_TOKEN' }),
  route('GET', '/assets/user-upload.csv', publicGate(), scope.global, noInput,
    ({ res }) => sendTemplate(res, 'user-upload.csv', userUploadCsv),
    {
    summary: 'Learner bulk-upload CSV template',
  }),
  route('GET', '/assets/teacher-upload.csv', publicGate(), scope.global, noInput,
    ({ res }) => sendTemplate(res, 'teacher-upload.csv', teacherUploadCsv),
    {
    summary: 'Teacher bulk-upload CSV template',
  }),
  route('GET', '/common/templatetype', publicGate(), scope.global, noInput,
    () => templateTypes, { summary: 'Question template types' }),
  // The admin UI calls this path; the same static list.
  route('GET', '/dropdown/templatetype', publicGate(), scope.global, noInput,
    () => templateTypes, { summary: 'Question template types (admin UI path)', alias: true }),
];
