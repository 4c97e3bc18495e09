import { noInput, publicGate, route, tokenOf } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const authRoutes: CentralRoute[] = [
  route('POST', '/auth/login', publicGate(), noInput, pending, { summary: 'staff login (email + password) -> access/refresh tokens' }),
  route('POST', '/auth/school/login', publicGate(), noInput, pending, { summary: 'school-user login (teacher and above) -> access token' }),
  route('POST', '/auth/logout', publicGate(), noInput, pending, { summary: 'revoke bearer\'s stored access/refresh tokens; always 200' }),
  route('POST', '/auth/verify', tokenOf('verifyemail'), noInput, pending, { summary: 'confirm staff email with verify-email token (query verifyemailtoken); 202' }),
  route('POST', '/auth/refreshtoken', tokenOf('refresh'), noInput, pending, { summary: 'exchange refresh token (query refreshtoken) for new token pair' }),
  route('PUT', '/auth/sendverificationemail', publicGate(), noInput, pending, { summary: 'e-mail a verification link to a staff account' }),
  route('POST', '/auth/forgotpassword', publicGate(), noInput, pending, { summary: 'e-mail a password-reset link to a staff account' }),
  route('PUT', '/auth/changepassword', tokenOf('changepassword'), noInput, pending, { summary: 'set new password using change-password token (query changepasswordtoken)' }),
  route('POST', '/auth/token/validate/changepassword', publicGate(), noInput, pending, { summary: 'report whether a change-password token is still valid' }),
];
