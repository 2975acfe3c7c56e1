import { z } from 'zod';

const count = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d{1,9}$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .refine((value) => value >= min && value <= max, `must be from ${min} to ${max}`);

/** Who may register applications without an operator (docs/operating.md "Registration of applications"). */
export const CLIENT_REGISTRATION_MODES = ['open', 'approval', 'closed'] as const;
export type ClientRegistrationMode = (typeof CLIENT_REGISTRATION_MODES)[number];

/** The developer portal's and dynamic registration's settings, part of src/config.ts's `settings`. */
export const developerSettings = {
  CLIENT_REGISTRATION: z
    .enum(CLIENT_REGISTRATION_MODES, { message: 'must be open, approval or closed' })
    .default('approval')
    .describe(
      'Who may register applications in the developer portal (`/developers`) and through RFC 7591 registration: `approval` (default): anyone with a confirmed e-mail, but a new application signs in only its owners until an operator approves it in the console; `open`: it signs anyone in at once, its consent page marked "not reviewed" until approved; `closed`: only operators register applications (`idp clients create`, the console).',
    ),
  DEVELOPER_APPS_PER_USER: count(1, 1_000)
    .default(10)
    .describe(
      'How many applications one account may own in the developer portal (deleted ones do not count).',
    ),
  DEVELOPER_CHANGES_PER_HOUR: count(1, 10_000)
    .default(60)
    .describe(
      "How many changes one account may make to its applications per hour (creating, editing, secrets, co-owners, registration tokens), the portal's and RFC 7591/7592's together.",
    ),
};
