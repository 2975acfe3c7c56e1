/**
 * The targets of the benchmark, judged from a run's measurements (bench/results.json), and for
 * each missed target where the time goes in that run. Costs are per request and all from one run:
 * the service's CPU against a baseline's (the bare route, oidc-provider) measured in the same rounds.
 */
import { DEVICE_POLL_SCENARIO } from './device.js';
import { type Measurement, roundRatio } from './harness.js';
import type { BenchResults } from './results.js';
import { judgeScale } from './scale.js';
import { SEARCH_QUERIES } from './search.js';
import { judgeStartup } from './startup.js';
import { judgeSustained, sustainedCosts } from './sustained-report.js';

/** What one request costs in a scenario (µs of CPU, bytes of WAL; null: not measured). */
export interface Cost {
  label: string;
  serviceCpu: number | null;
  postgresCpu: number | null;
  walBytes: number | null;
}

export interface TargetVerdict {
  target: string;
  measured: string;
  pass: boolean;
  /** What the target is about, for its line in "where a target is missed". */
  topic?: string;
  /** The scenario judged, then its baselines: where the time goes. */
  costs?: Cost[];
  /** For a target judged on something else than per-request costs: where to look. */
  note?: string;
}

const find = (json: BenchResults, target: Measurement['target'], prefix: string) =>
  json.measurements.find((row) => row.target === target && row.scenario.startsWith(prefix));
const times = (ratio: number) => `${ratio.toFixed(2)}×`;
const costOf = (row: Measurement): Cost => ({
  label: `${row.scenario}, ${row.target}`,
  serviceCpu: row.cpuMicrosPerRequest,
  postgresCpu: row.target === 'idp' ? (row.postgresCpuMicrosPerRequest ?? null) : null,
  walBytes: row.walBytesPerRequest ?? null,
});
/** The service's and PostgreSQL's CPU per request together; null if either is not measured. */
const bothCpus = (row: Measurement) =>
  row.cpuMicrosPerRequest === null || row.postgresCpuMicrosPerRequest == null
    ? null
    : row.cpuMicrosPerRequest + row.postgresCpuMicrosPerRequest;
const NOT_MEASURED = 'not measured (no CPU times: /proc missing?)';

/** Every target of the benchmark that this run measured, judged. */
export function judgeTargets(json: BenchResults): TargetVerdict[] {
  const verdicts: TargetVerdict[] = [];
  const ceiling = find(json, 'ceiling', 'bare Fastify');
  /** `ours` costs at most `factor` × `theirs` (µs of CPU per request, as `cpu` counts them). */
  const cpuAtMost = (
    topic: string,
    target: string,
    ours: Measurement | undefined,
    theirs: Measurement | undefined,
    factor: number,
    cpu: (row: Measurement) => number | null,
  ) => {
    if (!ours || !theirs) return;
    const [a, b] = [cpu(ours), cpu(theirs)];
    const ratio = a !== null && b ? a / b : null;
    verdicts.push({
      target,
      topic,
      measured: ratio === null ? NOT_MEASURED : `${a} µs against ${b} µs: ${times(ratio)}`,
      pass: ratio !== null && ratio <= factor && ours.non2xx === 0,
      costs: [costOf(ours), costOf(theirs)],
    });
  };
  const serviceCpu = (row: Measurement) => row.cpuMicrosPerRequest;
  const userinfo = find(json, 'idp', 'userinfo');
  cpuAtMost(
    'userinfo',
    "userinfo: the service's CPU per request ≤ 2× the bare route's",
    userinfo,
    ceiling,
    2,
    serviceCpu,
  );
  const me = find(json, 'idp', '/me');
  cpuAtMost('/me', "/me: the service's CPU per request ≤ 2× the bare route's", me, ceiling, 2, serviceCpu);

  const exchange = find(json, 'idp', 'authorization code exchange');
  const theirExchange = find(json, 'oidc-provider', 'authorization code exchange');
  const total = (row: Measurement) => (row.target === 'idp' ? bothCpus(row) : row.cpuMicrosPerRequest);
  cpuAtMost(
    'code exchange (RS256)',
    "code exchange (RS256): service + PostgreSQL CPU per exchange ≤ oidc-provider's CPU",
    exchange,
    theirExchange,
    1,
    total,
  );
  if (exchange) {
    const rsa = json.machine.rsa2048SignsPerSecond;
    const signature = rsa ? 1_000_000 / rsa : null;
    const rest =
      exchange.cpuMicrosPerRequest !== null && signature ? exchange.cpuMicrosPerRequest - signature : null;
    verdicts.push({
      target: "code exchange (RS256): the service's CPU per exchange less one RSA-2048 signature ≤ 250 µs",
      topic: 'code exchange (RS256)',
      measured:
        rest === null || signature === null
          ? 'not measured (no CPU times or no openssl speed)'
          : `${exchange.cpuMicrosPerRequest} µs − ${Math.round(signature)} µs (openssl speed: ${Math.round(rsa as number)} signs/s) = ${Math.round(rest)} µs`,
      pass: rest !== null && rest <= 250 && exchange.non2xx === 0,
      costs: [costOf(exchange), ...(theirExchange ? [costOf(theirExchange)] : [])],
    });
  }
  const es256 = find(json, 'idp', 'ES256 authorization code exchange');
  if (es256 && theirExchange) {
    const ratio = roundRatio(es256, theirExchange);
    verdicts.push({
      target: "code exchange (ES256) ≥ 3× oidc-provider's RS256 exchanges per second",
      topic: 'code exchange (ES256)',
      measured: `${es256.requestsPerSecond}/s against ${theirExchange.requestsPerSecond}/s: ${times(ratio)}`,
      pass: ratio >= 3 && es256.non2xx === 0,
      costs: [costOf(es256), costOf(theirExchange)],
    });
  }
  cpuAtMost(
    'refresh grant',
    "refresh grant (rotating): service + PostgreSQL CPU per refresh ≤ ½ oidc-provider's CPU",
    find(json, 'idp', 'refresh token grant'),
    find(json, 'oidc-provider', 'refresh token grant'),
    0.5,
    total,
  );
  cpuAtMost(
    'DPoP userinfo',
    'DPoP userinfo: service + PostgreSQL CPU per request ≤ 1.5× bearer userinfo’s',
    find(json, 'idp', 'DPoP-bound userinfo'),
    userinfo,
    1.5,
    total,
  );

  const polls = find(json, 'idp', DEVICE_POLL_SCENARIO);
  if (polls) {
    const cpu = polls.cpuMicrosPerRequest;
    verdicts.push({
      target: `${DEVICE_POLL_SCENARIO}: the service's CPU per answer < 100 µs`,
      topic: 'device_code poll',
      measured: cpu === null ? NOT_MEASURED : `${cpu} µs`,
      pass: cpu !== null && cpu < 100 && polls.non2xx === 0,
      costs: [costOf(polls)],
    });
  }

  const signIns = json.flows.find((flow) => flow.scenario.startsWith('password sign-in'));
  if (signIns) {
    // The server is pinned to one core; unpinned, it may use them all.
    const cores = json.machine.pinned ? 1 : json.machine.cores;
    const perCore = signIns.perSecond / cores;
    verdicts.push({
      target: 'password sign-ins ≥ 15/s per core (argon2id m=19 MiB, t=2, p=1)',
      measured: `${perCore.toFixed(1)}/s per core`,
      pass: perCore >= 15 && signIns.failures === 0,
      topic: 'password sign-ins',
      note: 'argon2id takes most of a sign-in; see the Flows section.',
    });
  }
  verdicts.push(...judgeSearch(json));
  verdicts.push(...judgeWallet(json));
  if (json.memory) {
    const mb = (mib: number) => mib * 1.048576;
    verdicts.push(
      {
        target: 'idle RSS < 150 MB',
        measured: `${json.memory.idleRssMb} MiB (${mb(json.memory.idleRssMb).toFixed(0)} MB)`,
        pass: mb(json.memory.idleRssMb) < 150,
        topic: 'memory',
        note: 'see the Memory section.',
      },
      {
        target: 'peak RSS under load < 250 MB',
        measured: `${json.memory.peakRssMb} MiB (${mb(json.memory.peakRssMb).toFixed(0)} MB)`,
        pass: mb(json.memory.peakRssMb) < 250,
        topic: 'memory',
        note: 'see the Memory section.',
      },
    );
  }
  verdicts.push(...judgeStartup(json.startup ?? []));
  const sustained = json.sustained;
  verdicts.push(
    ...judgeSustained(sustained).map((verdict) => ({
      ...verdict,
      topic: 'sustained charges',
      ...(sustained ? { costs: [sustainedCosts(sustained)] } : {}),
    })),
  );
  verdicts.push(
    ...judgeScale(json.scale).map((verdict) => ({
      ...verdict,
      topic: 'search at scale',
      note: 'see the plans of the Search at scale section.',
    })),
  );
  const failed = json.measurements.reduce((sum, row) => sum + row.non2xx, 0);
  const flowFailures = json.flows.reduce((sum, flow) => sum + flow.failures, 0);
  verdicts.push({
    target: 'no failed request (non-2xx, error) in any scenario',
    measured: `${failed} failed requests, ${flowFailures} failed flows`,
    pass: failed === 0 && flowFailures === 0,
  });
  return verdicts;
}

function judgeSearch(json: BenchResults): TargetVerdict[] {
  const verdicts: TargetVerdict[] = [];
  const sizes = json.settings.searchSizes;
  const largest = sizes.at(-1);
  const smallest = sizes[0];
  const rated = (query: string, size: number | undefined) =>
    json.measurements.find(
      (row) =>
        row.scenario.includes(`("${query}")`) &&
        row.scenario.endsWith(
          `${size?.toLocaleString('en')} users, ${json.settings.searchConnections} clients`,
        ),
    );
  const note = 'see the plans of the Search section.';
  for (const query of SEARCH_QUERIES) {
    const large = rated(query.q, largest);
    if (!large) continue;
    verdicts.push({
      target: `search p99 < 50 ms at ${largest?.toLocaleString('en')} users (${query.name})`,
      measured: `${large.p99Ms} ms`,
      pass: large.p99Ms < 50,
      topic: 'search',
      note,
    });
    const small = rated(query.q, smallest);
    if (small && sizes.length >= 2) {
      // autocannon reports whole milliseconds; a 0 ms median counts as 1 ms.
      const ratio = large.p50Ms / Math.max(small.p50Ms, 1);
      verdicts.push({
        target: `search median at ${largest?.toLocaleString('en')} ≤ 2× the median at ${smallest?.toLocaleString('en')} (${query.name})`,
        measured: `${large.p50Ms} ms against ${small.p50Ms} ms: ${times(ratio)}`,
        pass: ratio <= 2,
        topic: 'search',
        note,
      });
    }
  }
  return verdicts;
}

function judgeWallet(json: BenchResults): TargetVerdict[] {
  const verdicts: TargetVerdict[] = [];
  const spread = find(json, 'idp', 'wallet charges over');
  const hot = find(json, 'idp', 'wallet charges on one hot wallet');
  if (spread) {
    verdicts.push({
      target: 'charges ≥ 1,500/s over many users',
      measured: `${spread.requestsPerSecond}/s`,
      pass: spread.requestsPerSecond >= 1500 && spread.non2xx === 0,
      topic: 'charges',
      costs: [costOf(spread)],
    });
    const cpu = bothCpus(spread);
    verdicts.push({
      target: 'charges over many users: service + PostgreSQL CPU ≤ 1,000 µs per charge',
      measured:
        cpu === null
          ? NOT_MEASURED
          : `${spread.cpuMicrosPerRequest} + ${spread.postgresCpuMicrosPerRequest} = ${cpu} µs`,
      pass: cpu !== null && cpu <= 1000,
      topic: 'charges',
      costs: [costOf(spread)],
    });
  }
  if (hot) {
    verdicts.push({
      target: 'charges ≥ 300/s on one hot wallet',
      measured: `${hot.requestsPerSecond}/s`,
      pass: hot.requestsPerSecond >= 300 && hot.non2xx === 0,
      topic: 'charges on one wallet',
      costs: [costOf(hot)],
    });
  }
  if (json.ledgerChecks.postgres) {
    const check = json.ledgerChecks.postgres;
    verdicts.push({
      target: 'ledger invariant after the charges',
      measured: `${check.wallets_checked} wallets, ${check.mismatches.length} mismatches`,
      pass: check.ok,
      topic: 'ledger',
      note: 'the mismatched wallets are in results.json (ledgerChecks).',
    });
  }
  return verdicts;
}
