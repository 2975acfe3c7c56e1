import { InvalidRequest } from '../../lib/errors.js';

/** Why the console refused an action on an account: each has its text on the user's page. */
export type RefusalReason =
  | 'not_found'
  | 'deleted'
  | 'disabled'
  | 'no_email'
  | 'reset_limit'
  | 'invalid_amount'
  | 'invalid_reason'
  | 'invalid_period'
  | 'insufficient_funds'
  | 'balance_limit'
  | 'confirm_mismatch';

/**
 * 400 `invalid_request`: an action the account's state or the form does not allow (a debit beyond the
 * balance, a reset link for an account without an address). Nothing was changed. The page shows
 * `reason`'s text in the operator's language; the description is for the log and the CLI.
 */
export class UserActionRefused extends InvalidRequest {
  constructor(
    readonly reason: RefusalReason,
    description: string,
  ) {
    super(description);
  }
}
