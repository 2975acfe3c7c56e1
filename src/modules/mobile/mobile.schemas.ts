import { z } from 'zod';

/** `device_id`: 8–128 characters of `[A-Za-z0-9._-]`. */
export const DEVICE_ID = /^[A-Za-z0-9._-]{8,128}$/;

/** base64url without padding. */
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** How long a challenge may be used (at most 120 s). */
export const CHALLENGE_TTL_SECONDS = 60;

/** The scopes of a mobile session: the whole profile, as the app shows it. */
export const MOBILE_SCOPES = ['openid', 'profile', 'email', 'verified'];

const deviceId = z
  .string({ message: 'device_id is required' })
  .regex(DEVICE_ID, 'device_id must be 8–128 characters of A–Z, a–z, 0–9, ".", "_" and "-"');

/** base64url (no padding) of exactly `bytes` bytes. */
function base64urlOf(name: string, bytes: number) {
  const length = Math.ceil((bytes * 4) / 3);
  return z
    .string({ message: `${name} is required` })
    .refine(
      (value) => value.length === length && BASE64URL.test(value),
      `${name} must be ${bytes} bytes in base64url without padding (${length} characters)`,
    );
}

export const publicKeySchema = base64urlOf('public_key', 32);
export const signatureSchema = base64urlOf('signature', 64);

const challenge = z
  .string({ message: 'challenge is required' })
  .min(1, 'challenge is required')
  .max(128, 'challenge is not one this service issued');

/** Every mobile body names the app's client; it is checked before the rest (see mobile.routes). */
const clientId = z.string({ message: 'client_id is required' }).min(1).max(128);

export const challengeBodySchema = z.object({ client_id: clientId, device_id: deviceId });
export type ChallengeBody = z.infer<typeof challengeBodySchema>;

export const verifyBodySchema = z.object({
  client_id: clientId,
  device_id: deviceId,
  challenge,
  signature: signatureSchema,
  public_key: publicKeySchema,
  username: z.string({ message: 'username is required' }).min(1, 'username is required').max(128),
  password: z.string({ message: 'password is required' }).min(1, 'password is required').max(1024),
});

/** The second step of a sign-in (docs/mobile.md): a fresh challenge signed by the key of the password step. */
export const secondFactorBodySchema = z.object({
  client_id: clientId,
  device_id: deviceId,
  mfa_token: z
    .string({ message: 'mfa_token is required' })
    .min(1, 'mfa_token is required')
    .max(128, 'mfa_token is not one this service issued'),
  code: z.string({ message: 'code is required' }).min(1, 'code is required').max(64, 'code is too long'),
  challenge,
  signature: signatureSchema,
});
export type SecondFactorBody = z.infer<typeof secondFactorBodySchema>;

export const refreshBodySchema = z.object({
  client_id: clientId,
  device_id: deviceId,
  refresh_token: z
    .string({ message: 'refresh_token is required' })
    .min(1, 'refresh_token is required')
    .max(256, 'refresh_token is not one this service issued'),
  challenge,
  signature: signatureSchema,
});

export const logoutBodySchema = z.object({ client_id: clientId, device_id: deviceId });
export type LogoutBody = z.infer<typeof logoutBodySchema>;
export type VerifyBody = z.infer<typeof verifyBodySchema>;
export type RefreshBody = z.infer<typeof refreshBodySchema>;

export const challengeResponseSchema = z.object({
  ok: z.literal(true),
  challenge: z.string(),
  expires_in: z.number().int(),
});

export const sessionResponseSchema = z.object({
  ok: z.literal(true),
  access_token: z.string(),
  refresh_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  scope: z.string(),
  user: z.record(z.string(), z.unknown()),
});
export type SessionResponse = z.infer<typeof sessionResponseSchema>;

/** How long the `mfa_token` of a password step waits for its second factor (docs/mobile.md). */
export const MFA_TOKEN_TTL_SECONDS = 300;

/** 403 of verify for an account with a second factor (docs/mobile.md): no token, a second step to take. */
export const mfaRequiredResponseSchema = z.object({
  ok: z.literal(false),
  error: z.literal('mfa_required'),
  error_description: z.string(),
  mfa_token: z.string(),
  methods: z.array(z.enum(['totp', 'recovery_code'])),
  expires_in: z.number().int(),
});
export type MfaRequiredResponse = z.infer<typeof mfaRequiredResponseSchema>;

/**
 * Any 403 of verify: `mfa_required` with the second step's fields (above), or `access_denied` for
 * a client that is not the official app. One object, so that the API reference lists the fields.
 */
export const verifyForbiddenResponseSchema = z.object({
  ok: z.literal(false),
  error: z.string().describe('mfa_required (or access_denied: not the official app)'),
  error_description: z.string(),
  mfa_token: z.string().optional().describe('mfa_required: the second step, 300 s, this device and key only'),
  methods: z
    .array(z.enum(['totp', 'recovery_code']))
    .optional()
    .describe('mfa_required: what the account can answer with; [] for passkeys only'),
  expires_in: z.number().int().optional().describe('mfa_required: seconds the mfa_token lives'),
});
