import { noInput, publicGate } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';

export const VERSION = '1.0.0';

export const appRoutes: ClassroomRoute[] = [
  route('GET', '/', publicGate(), noInput, ({ res }) => {
    res.type('text/plain').send('FORTYK RPI API ***');
  }, { summary: 'Liveness banner (plain text)' }),
  route('GET', '/version', publicGate(), noInput, ({ res }) => {
    res.type('text/plain').send(VERSION);
  }, { summary: 'Running version (plain text)' }),
];
