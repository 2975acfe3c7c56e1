import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hiddenFields } from '../helpers/browser.js';
import {
  childEnv,
  type RunningServer,
  runIdp,
  startServer,
  stopAllChildren,
  succeeded,
} from '../helpers/cli.js';
import { CookieJar } from '../helpers/cookie-jar.js';
import { createEmptyPostgresDatabase, usingPostgres } from '../helpers/database.js';
import { freePort } from '../helpers/tcp-proxy.js';
import { TestSmtpServer } from '../modules/mail/smtp.js';

/*
 * E-mail delivery across real server processes: two instances on one PostgreSQL
 * send the outbox to one SMTP server in this process. People sign up on either; the SMTP server
 * stops part way through and starts again on the same port. What was signed up meanwhile waits in
 * the outbox and arrives once it is back; every verification message arrives exactly once, sent by
 * one instance or the other.
 * The instances run with their real retry schedule, which no setting shortens: a message that met
 * the stopped server is tried again 30 seconds later (a refused connection counts as any failure),
 * so this test waits that long. PostgreSQL only: the embedded database belongs to one process.
 */

const TIMEOUT = 120_000;
const PASSWORD = 'a long enough password';
/** Sign-ups before the SMTP server stops, while it is stopped, and after it is back. */
const BEFORE = 12;
const DURING = 10;
const AFTER = 8;
const TOTAL = BEFORE + DURING + AFTER;

/** What `idp mail outbox --json` answers. */
interface Outbox {
  pending: number;
  sent: number;
  failed: number;
  messages: { id: number; recipient: string; status: string; attempts: number; last_error: string | null }[];
}

const smtp = new TestSmtpServer();
let drop: (() => Promise<void>) | undefined;
let env: Record<string, string>;
let a: RunningServer;
let b: RunningServer;

describe.skipIf(!usingPostgres)('e-mail from two instances, with the SMTP server stopped mid-run', () => {
  beforeAll(async () => {
    await smtp.start();
    const database = await createEmptyPostgresDatabase();
    drop = database.drop;
    const [portA, portB] = [await freePort(), await freePort()];
    env = childEnv({
      DATABASE_URL: database.url,
      PUBLIC_URL: `http://127.0.0.1:${portA}`,
      COOKIE_SECRET: 'a shared cookie secret of the two instances, long enough',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SMTP_URL: smtp.url(),
      // Thirty sign-ups from one address within a minute: more than the default limit allows.
      RATE_LIMIT_SIGNIN_PER_MIN: '0',
    });
    succeeded(await runIdp(['migrate', '--json'], { env }));
    [a, b] = await Promise.all([
      startServer({ env: { ...env, PORT: String(portA) } }),
      startServer({ env: { ...env, PORT: String(portB) } }),
    ]);
  }, TIMEOUT);

  afterAll(async () => {
    await stopAllChildren();
    await smtp.stop();
    await drop?.();
  });

  const address = (n: number) => `person${n}@example.org`;

  /** Signs person `n` up with an e-mail address on the sign-up page of `server`. */
  async function signUp(server: RunningServer, n: number): Promise<void> {
    const jar = new CookieJar();
    const page = jar.keep(await fetch(`${server.url}/signup`));
    expect(page.status).toBe(200);
    const res = await fetch(`${server.url}/signup`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...hiddenFields(await page.text(), '/signup'),
        username: `person${n}`,
        password: PASSWORD,
        email: address(n),
      }).toString(),
    });
    expect(res.status, await res.clone().text()).toBe(303);
  }

  /** Signs up persons `from` to `to - 1`, alternating between the two instances. */
  async function signUpRange(from: number, to: number): Promise<void> {
    for (let n = from; n < to; n++) await signUp(n % 2 === 0 ? a : b, n);
  }

  async function outbox(): Promise<Outbox> {
    return succeeded(
      await runIdp(['mail', 'outbox', '--limit', '1000', '--json'], { env }),
    ) as unknown as Outbox;
  }

  /** The outbox once `holds` says so, or as it is after `timeoutMs` (the caller checks it). */
  async function outboxWhen(holds: (box: Outbox) => boolean, timeoutMs: number): Promise<Outbox> {
    let box = await outbox();
    const check = async () => {
      box = await outbox();
      return holds(box);
    };
    if (!holds(box)) await vi.waitUntil(check, { timeout: timeoutMs, interval: 200 }).catch(() => undefined);
    return box;
  }

  /** The e-mail log lines of `server`: what it said of each message it claimed. */
  function mailLog(server: RunningServer): Array<{ msg: string; mailId: number }> {
    return server
      .output()
      .stdout.split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: unknown; mailId?: unknown })
      .filter((entry): entry is { msg: string; mailId: number } => typeof entry.mailId === 'number')
      .filter((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('mail: '));
  }

  /** The ids of the messages `server` logged as sent. */
  function sentBy(server: RunningServer): number[] {
    return mailLog(server)
      .filter((entry) => entry.msg === 'mail: sent')
      .map((entry) => entry.mailId);
  }

  it('delivers every verification message exactly once, holding those queued while SMTP was down', {
    timeout: TIMEOUT,
  }, async () => {
    await signUpRange(0, BEFORE);
    await smtp.waitFor(BEFORE, 15_000);

    await smtp.stop();
    await signUpRange(BEFORE, BEFORE + DURING);
    // Every one of them has been tried (each instance hears the commit at once) and now waits.
    const waiting = await outboxWhen(
      (box) => box.messages.filter((mail) => mail.status === 'waiting' && mail.attempts > 0).length >= DURING,
      10_000,
    );
    expect(waiting).toMatchObject({ pending: DURING, sent: BEFORE, failed: 0 });
    for (const mail of waiting.messages.filter((each) => each.status === 'waiting')) {
      expect(mail.attempts).toBe(1);
      expect(mail.last_error).toMatch(/ECONNREFUSED/);
    }
    expect(smtp.received).toHaveLength(BEFORE);

    await smtp.start();
    await signUpRange(BEFORE + DURING, TOTAL);
    // Those signed up after the restart go out at once; the waiting ones at their retry, 30 s on.
    await smtp.waitFor(TOTAL, 60_000);
    // A late duplicate would come from a claim still under way. Every claim counts one attempt in
    // the outbox and ends in one log line of the instance that made it (sent, failed, or given up
    // to another claim): once every message is recorded as sent (no claim can start) and the
    // lines account for every attempt (none is under way), nothing more can arrive.
    const settled = (box: Outbox) =>
      box.pending === 0 &&
      box.messages.reduce((sum, mail) => sum + mail.attempts, 0) === mailLog(a).length + mailLog(b).length;
    const done = await outboxWhen(settled, 30_000);
    expect(settled(done), JSON.stringify({ done, a: mailLog(a), b: mailLog(b) })).toBe(true);

    const recipients = smtp.received.flatMap((mail) => mail.rcptTo);
    expect(smtp.received).toHaveLength(TOTAL);
    expect(recipients.toSorted()).toEqual(Array.from({ length: TOTAL }, (_, n) => address(n)).toSorted());
    for (const mail of smtp.received) {
      expect(mail.parsed.subject).toBe('Confirm your e-mail address');
      expect(mail.parsed.text).toMatch(new RegExp(`^${env.PUBLIC_URL}/email/verify\\?token=ev_`, 'm'));
    }
    expect(done).toMatchObject({ pending: 0, sent: TOTAL, failed: 0 });

    // Each message is recorded as sent by one instance, and the two shared the work.
    const [byA, byB] = [sentBy(a), sentBy(b)];
    const byId = (x: number, y: number) => x - y;
    expect([...byA, ...byB].toSorted(byId)).toEqual(done.messages.map((mail) => mail.id).toSorted(byId));
    expect(byA.length).toBeGreaterThan(0);
    expect(byB.length).toBeGreaterThan(0);
  });
});
