// Compiled with the service (tsc -b) and never mounted: the build fails if a handler could read a field its
// route's schema lacks, or a part of the request no schema checked, because each @ts-expect-error below would
// then have nothing to expect.
import { z } from 'zod';
import { anyUser } from '@lms/shared';
import { route } from './route';
import { scope } from './scope';

const params = z.object({ gradeid: z.string() });

export const handlerTypeChecks = [
  route('GET', '/check/:gradeid', anyUser(), scope.global, { params }, ({ db, params }) => {
    const gradeid: string = params.gradeid;
    // @ts-expect-error `gradid` is not a field of the params schema
    return [db, gradeid, params.gradid];
  }),
  route('POST', '/check', anyUser(), scope.global, {}, ({ body }) => {
    // @ts-expect-error the route declares no body schema: its body is unknown
    return body.gradeid;
  }),
];
