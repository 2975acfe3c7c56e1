import type { EmailChangeProblem } from '../../modules/accounts/email-change.service.js';

/** The texts of `/account/email` (email-page.ts holds one object per language). */
export interface EmailPageTexts {
  heading: string;
  currentAddress: string;
  noAddress: string;
  confirmed: string;
  notConfirmed: string;
  resendText: string;
  resendSubmit: string;
  /** A change waiting for its link to be used. */
  pending: (email: string) => string;
  changeHeading: string;
  newEmail: string;
  newEmailHint: string;
  currentPassword: string;
  currentPasswordHint: string;
  submit: string;
  correctFields: string;
  backToAccount: string;
  problems: Record<EmailChangeProblem, string>;
}
