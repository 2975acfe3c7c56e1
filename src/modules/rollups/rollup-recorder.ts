import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { addRollups, type RollupCount } from './rollups.repository.js';
import { type RouteClass, routeClassOf } from './route-class.js';

/** The counters of the console's charts, as their rows name them. */
export const ROLLUP_NAMES = [
  'sign_ins_ok',
  'sign_ins_failed',
  'second_factor_failures',
  'codes_issued',
  'tokens_issued',
  'refreshes',
  'charges',
  /** Hundredths of a coin, so that a charge of 2.5 coins adds 250. */
  'charged_minor_units',
  'http_4xx',
  'http_5xx',
  'http_429',
  /** Token endpoint answers of a client, keyed `client_id|outcome` (TOKEN_OUTCOMES). */
  'token_requests',
] as const;
export type RollupName = (typeof ROLLUP_NAMES)[number];

/**
 * The outcomes a token endpoint answer is counted under: `ok` or its error code (RFC 6749 §5.2,
 * RFC 9449 §5), any other code as `other`, so a client's keys are a bounded set.
 */
export const TOKEN_OUTCOMES = [
  'ok',
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_dpop_proof',
  'use_dpop_nonce',
  'other',
] as const;
export type TokenOutcome = (typeof TOKEN_OUTCOMES)[number];
const OUTCOMES: ReadonlySet<string> = new Set(TOKEN_OUTCOMES);

/** Clients whose outcome keys are kept built (see `tokenRequest`). */
const MAX_OUTCOME_KEY_CLIENTS = 10_000;

const MINUTE_MS = 60_000;
/** Rows per INSERT of a flush: far below PostgreSQL's 65,535 parameters (4 a row). */
const ROWS_PER_STATEMENT = 1_000;
/**
 * Minutes of counts kept while the database refuses the flushes; past that the oldest are dropped,
 * so an outage cannot grow the process's memory without bound.
 */
export const MAX_PENDING_MINUTES = 60;

/** One minute's counts: name → key → count. */
type Counts = Map<string, Map<string, number>>;

function add(counts: Counts, name: string, key: string, by: number): void {
  let keys = counts.get(name);
  if (keys === undefined) {
    keys = new Map();
    counts.set(name, keys);
  }
  keys.set(key, (keys.get(key) ?? 0) + by);
}

/**
 * Counts in memory, per minute, and adds them to `metric_rollups` when flushed (once a minute and
 * at shutdown: src/modules/rollups/rollup-flush.ts). Counting is a map update, never a query: the
 * database sees one statement per instance and minute, whatever the traffic.
 *
 * Time is the process's clock (`now`), like the request log's: the counts are of when the process
 * saw them, not of a test's moved clock.
 */
export class RollupRecorder {
  /** minute (ms) → name → key → count: nested maps, so that counting builds no string. */
  private readonly minutes = new Map<number, Counts>();
  private currentMinute = -1;
  private current: Counts | undefined;
  private readonly classes = new Map<string | undefined, RouteClass>();
  /** client_id → outcome → its `token_requests` key. */
  private readonly outcomeKeys = new Map<string, Map<string, string>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Adds `by` to counter `name` (of `key`: '' for the total) in the current minute. */
  count(name: RollupName, key = '', by = 1): void {
    add(this.minuteCounts(), name, key, by);
  }

  /** The counts of the current minute. */
  private minuteCounts(): Counts {
    const minute = Math.floor(this.now() / MINUTE_MS) * MINUTE_MS;
    if (minute !== this.currentMinute || this.current === undefined) {
      this.currentMinute = minute;
      this.current = this.minutes.get(minute);
      if (this.current === undefined) {
        this.current = new Map();
        this.minutes.set(minute, this.current);
      }
    }
    return this.current;
  }

  /** An answer (the onResponse hook): 4xx, 5xx and 429 by the class of its route pattern. */
  response(routePattern: string | undefined, status: number): void {
    if (status < 400) return;
    let routeClass = this.classes.get(routePattern);
    if (routeClass === undefined) {
      routeClass = routeClassOf(routePattern);
      // Patterns are the app's routes (and `undefined`): a bounded set.
      this.classes.set(routePattern, routeClass);
    }
    this.count(status >= 500 ? 'http_5xx' : 'http_4xx', routeClass);
    if (status === 429) this.count('http_429', routeClass);
  }

  /**
   * An audit event (the recorder of src/modules/audit): sign-ins that passed their first step, at
   * any door (password, passkey, the mobile app's verify), failed ones, and failed second steps. A
   * mobile device signed in after its second step is not counted again: its password step was.
   */
  audit(action: string, details?: Record<string, unknown>): void {
    if (action === 'sign_in') this.count('sign_ins_ok');
    else if (action === 'sign_in_failed') this.count('sign_ins_failed');
    else if (action === 'second_factor_failed') this.count('second_factor_failures');
    else if (action === 'device_signed_in' && details?.second_factor === undefined) this.count('sign_ins_ok');
  }

  /** A token set issued to `clientId`: in the total and the client's own series; refreshes apart. */
  tokens(clientId: string, grantType: string | undefined): void {
    const counts = this.minuteCounts();
    add(counts, 'tokens_issued', '', 1);
    add(counts, 'tokens_issued', clientId, 1);
    if (grantType === 'refresh_token' || grantType === 'mobile_refresh') add(counts, 'refreshes', '', 1);
  }

  /** An authorization code issued to `clientId`: in the total and the client's own series. */
  code(clientId: string): void {
    const counts = this.minuteCounts();
    add(counts, 'codes_issued', '', 1);
    add(counts, 'codes_issued', clientId, 1);
  }

  /**
   * A token endpoint answer to an existing client, by outcome (`ok` or the error code). The keys
   * are built once per client and outcome: joining and hashing a new string on every answer cost
   * the token endpoint a few hundred nanoseconds.
   */
  tokenRequest(clientId: string, outcome: string): void {
    let keys = this.outcomeKeys.get(clientId);
    if (keys === undefined) {
      // Existing clients only (the hook's rule), yet bounded like the client cache.
      if (this.outcomeKeys.size >= MAX_OUTCOME_KEY_CLIENTS) this.outcomeKeys.clear();
      keys = new Map();
      this.outcomeKeys.set(clientId, keys);
    }
    const known = OUTCOMES.has(outcome) ? outcome : 'other';
    let key = keys.get(known);
    if (key === undefined) {
      key = `${clientId}|${known}`;
      keys.set(known, key);
    }
    this.count('token_requests', key);
  }

  /** A wallet charge made (not a replay): its count and its coins, in hundredths. */
  charge(amount: number): void {
    this.count('charges');
    this.count('charged_minor_units', '', Math.round(amount * 100));
  }

  /** Everything counted so far, forgotten here: the caller writes it or gives it back (`restore`). */
  take(): RollupCount[] {
    const counts: RollupCount[] = [];
    for (const [minute, names] of this.minutes) {
      for (const [name, keys] of names) {
        for (const [key, value] of keys) counts.push({ minute: new Date(minute), name, key, value });
      }
    }
    this.minutes.clear();
    this.current = undefined;
    return counts;
  }

  /** Gives back counts a flush could not write, keeping only the latest MAX_PENDING_MINUTES minutes. */
  restore(counts: readonly RollupCount[]): void {
    for (const { minute, name, key, value } of counts) {
      const ms = minute.getTime();
      let names = this.minutes.get(ms);
      if (names === undefined) {
        names = new Map();
        this.minutes.set(ms, names);
      }
      add(names, name, key, value);
    }
    const kept = [...this.minutes.keys()].sort((a, b) => b - a).slice(0, MAX_PENDING_MINUTES);
    for (const minute of this.minutes.keys()) if (!kept.includes(minute)) this.minutes.delete(minute);
    this.current = undefined;
  }

  /**
   * Adds everything counted so far to the database, a few statements at most; on failure the
   * counts are kept for the next flush and the error is thrown. Returns the rows written.
   */
  async flush(db: Kysely<Database>): Promise<number> {
    const counts = this.take();
    for (let start = 0; start < counts.length; start += ROWS_PER_STATEMENT) {
      try {
        await addRollups(db, counts.slice(start, start + ROWS_PER_STATEMENT));
      } catch (error) {
        this.restore(counts.slice(start));
        throw error;
      }
    }
    return counts.length;
  }
}

/**
 * The process's recorder, which the counting hooks (the response hook, the audit recorder, the
 * token, code and charge routes) add to and the flush worker writes. One per process, as the
 * Prometheus registry is: every app built in the process counts into it.
 */
export const rollups = new RollupRecorder();
