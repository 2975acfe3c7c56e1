import {
  isSigningAlgorithm,
  SIGNING_ALGORITHMS_TEXT,
  type SigningAlgorithm,
} from '../lib/signing-algorithms.js';
import { type ParsedArgs, str, UsageError } from './command.js';

/**
 * Reads an option naming an id_token signing algorithm (`--alg`, `--id-token-alg`), or undefined
 * when absent. Spelled exactly as the JWS `alg` is (RFC 7515 §4.1.1: case-sensitive).
 * @throws UsageError for any other value, before the database is opened (the command's `check`).
 */
export function algorithmOption(args: ParsedArgs, name: string): SigningAlgorithm | undefined {
  const value = str(args, name);
  if (value === undefined || isSigningAlgorithm(value)) return value;
  throw new UsageError(`--${name} must be ${SIGNING_ALGORITHMS_TEXT}, got "${value}"`);
}
