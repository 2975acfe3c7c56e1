import { z } from 'zod';

/*
 * What a browser sends back from navigator.credentials (WebAuthn §5.1, as @simplewebauthn/browser
 * encodes it to JSON). Every field is bounded and base64url-shaped before the library decodes it,
 * so no input reaches CBOR or signature code unchecked; the library then checks the rest.
 */

/** base64url without padding (WebAuthn §5.1.3: the JSON encoding of binary fields). */
const base64url = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/);

/** WebAuthn §6.1: a credential id is at most 1023 bytes (1364 base64url characters). */
const credentialId = base64url(1400);

const extensionResults = z.record(z.string(), z.unknown()).optional().default({});
const attachment = z.enum(['platform', 'cross-platform']).optional();
const transports = z
  .array(z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']))
  .max(10)
  .optional();

export const registrationResponse = z.object({
  id: credentialId,
  rawId: credentialId,
  type: z.literal('public-key'),
  authenticatorAttachment: attachment,
  clientExtensionResults: extensionResults,
  response: z.object({
    clientDataJSON: base64url(16_384),
    attestationObject: base64url(131_072),
    authenticatorData: base64url(131_072).optional(),
    publicKey: base64url(16_384).optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    transports,
  }),
});

export const authenticationResponse = z.object({
  id: credentialId,
  rawId: credentialId,
  type: z.literal('public-key'),
  authenticatorAttachment: attachment,
  clientExtensionResults: extensionResults,
  response: z.object({
    clientDataJSON: base64url(16_384),
    authenticatorData: base64url(16_384),
    signature: base64url(4096),
    // WebAuthn §5.2.2: at most 64 bytes.
    userHandle: base64url(128).optional(),
  }),
});

export type RegistrationResponse = z.infer<typeof registrationResponse>;
export type AuthenticationResponse = z.infer<typeof authenticationResponse>;

/** A passkey's name as the user gives it: trimmed, 1–64 characters, no control characters. */
export const passkeyName = z
  .string()
  .max(4096)
  .transform((value) => value.trim())
  .pipe(
    z
      .string()
      .min(1)
      .max(64)
      .regex(/^[^\p{Cc}]*$/u),
  );
