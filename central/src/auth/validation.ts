import { z } from 'zod';
import { PASSWORD_POLICY_MESSAGE, passwordMeetsPolicy } from './passwords';

/** A JSON object that refuses unknown keys with the original's words: `"<key>" is not allowed`. */
export function strictBody<T extends z.ZodRawShape>(shape: T) {
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? `"${iss.keys[0]}" is not allowed` : undefined),
  });
}

export const requiredString = z.string({ error: 'is required' });

const EMAIL = z.email();
export const isEmail = (v: string): boolean => v.length <= 300 && EMAIL.safeParse(v).success;

/** Adds the contract's whole-body messages (`Invalid Email`, the password policy) as body-level issues. */
export function checkEmail(value: string, ctx: z.RefinementCtx): void {
  if (!isEmail(value)) ctx.addIssue({ code: 'custom', message: 'Invalid Email', path: [] });
}

export function checkPassword(value: string, ctx: z.RefinementCtx): void {
  if (!passwordMeetsPolicy(value)) ctx.addIssue({ code: 'custom', message: PASSWORD_POLICY_MESSAGE, path: [] });
}

export const uuidParam = (name: string, message: string) =>
  z.object({
    [name]: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { error: message }),
  });
