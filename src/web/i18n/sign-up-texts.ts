import type { SignUpProblem } from '../../modules/accounts/sign-up.service.js';

/** The sign-up page (`/signup`): its fields' hints, and the problem of each field. */
export interface SignUpTexts {
  heading: string;
  correctFields: string;
  usernameHint: string;
  /** What the optional address is for: the only way back in after a forgotten password. */
  emailHint: string;
  /** The rules of a new password (src/lib/password.ts): its length, and no common password. */
  passwordHint: string;
  submit: string;
  haveAccount: string;
  signIn: string;
  problems: Record<SignUpProblem, string>;
}
