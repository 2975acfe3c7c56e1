/**
 * An e-mail address with its local part cut to its first character: `n…@example.com`. Enough for
 * the owner to recognise an address in a notice sent elsewhere or in the audit log, which outlives
 * the account, without spelling out the whole address there.
 */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '…';
  return `${Array.from(address.slice(0, at))[0]}…${address.slice(at)}`;
}
