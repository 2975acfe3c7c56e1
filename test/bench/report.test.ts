import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Measurement, roundRatio } from '../../bench/harness.js';
import {
  type BenchResults,
  judgeTargets,
  renderMarkdown,
  withLastScale,
  writeResults,
} from '../../bench/report.js';

/* The verdicts of bench/results.md, judged from a run's measurements (bench/report.ts). */

function row(
  scenario: string,
  target: Measurement['target'],
  runs: number[],
  extra: Partial<Measurement> = {},
) {
  const sorted = [...runs].sort((a, b) => a - b);
  return {
    scenario,
    target,
    requestsPerSecond: sorted[Math.floor(sorted.length / 2)] as number,
    p50Ms: 2,
    p99Ms: 9,
    non2xx: 0,
    runs,
    cpuMicrosPerRequest: 100,
    postgresCpuMicrosPerRequest: 10,
    ...extra,
  } satisfies Measurement;
}

function results(measurements: Measurement[], extra: Partial<BenchResults> = {}): BenchResults {
  return {
    measuredAt: '2026-11-21T00:00:00.000Z',
    smoke: false,
    machine: { cores: 2, node: 'v20', pinned: true, rsa2048SignsPerSecond: 1500 },
    settings: {
      seconds: 10,
      warmupSeconds: 3,
      runs: 3,
      connections: 32,
      searchConnections: 8,
      searchSizes: [100_000, 1_000_000],
    },
    measurements,
    flows: [],
    searchPlans: {},
    ledgerChecks: {},
    memory: { idleRssMb: 120, peakRssMb: 200 },
    ...extra,
  };
}

const verdict = (json: BenchResults, prefix: string) =>
  judgeTargets(json).find((each) => each.target.startsWith(prefix));

describe('the benchmark report', () => {
  it('takes ratios round by round: a machine that slows down in one round slows both sides', () => {
    const ours = row('userinfo (1000 distinct tokens)', 'idp', [10_000, 5_000, 10_000]);
    const theirs = row('userinfo (1000 distinct tokens)', 'oidc-provider', [2_000, 1_000, 2_000]);
    expect(roundRatio(ours, theirs)).toBe(5);
  });

  it('judges each target against its threshold', () => {
    const json = results([
      row('bare Fastify JSON route (ceiling)', 'ceiling', [20_000, 20_000, 20_000], {
        cpuMicrosPerRequest: 30,
      }),
      row('userinfo (1000 distinct tokens)', 'idp', [10_000, 10_000, 10_000], { cpuMicrosPerRequest: 60 }),
      row('/me (1000 distinct tokens)', 'idp', [9_000, 9_000, 9_000], { cpuMicrosPerRequest: 61 }),
      row('refresh token grant (rotating)', 'idp', [1_900, 2_000, 2_100], {
        cpuMicrosPerRequest: 200,
        postgresCpuMicrosPerRequest: 100,
      }),
      row('refresh token grant (rotating)', 'oidc-provider', [1_000, 1_000, 1_000], {
        cpuMicrosPerRequest: 600,
      }),
      row('wallet charges over 200 users', 'idp', [1_400, 1_450, 1_500], {
        cpuMicrosPerRequest: 400,
        postgresCpuMicrosPerRequest: 601,
      }),
    ]);
    expect(verdict(json, 'userinfo:')?.pass).toBe(true); // 60 µs against 30 µs: 2×
    expect(verdict(json, '/me:')?.pass).toBe(false); // 61 µs against 30 µs
    expect(verdict(json, 'refresh grant')?.pass).toBe(true); // 300 µs against 600 µs: ½
    expect(verdict(json, 'charges ≥ 1,500/s')?.pass).toBe(false); // median 1,450
    expect(verdict(json, 'charges over many users: service + PostgreSQL CPU')?.pass).toBe(false); // 1,001 µs
    expect(verdict(json, 'idle RSS')?.pass).toBe(true);
    expect(verdict(json, 'peak RSS')?.pass).toBe(true);
    expect(verdict(json, 'no failed request')?.pass).toBe(true);
  });

  it('fails a target whose scenario had failed requests, and says where the time went', () => {
    const json = results([row('wallet charges over 200 users', 'idp', [2_000, 2_000, 2_000], { non2xx: 3 })]);
    expect(verdict(json, 'charges ≥ 1,500/s')?.pass).toBe(false);
    expect(verdict(json, 'no failed request')?.pass).toBe(false);
    const markdown = renderMarkdown(json);
    expect(markdown).toContain('| charges ≥ 1,500/s over many users | 2000/s | **fail** |');
    expect(markdown).toContain('- **charges**: 100 µs of the server');
  });

  it('judges no target in a smoke run', () => {
    const markdown = renderMarkdown(
      results([row('userinfo (1000 distinct tokens)', 'idp', [1])], { smoke: true, memory: null }),
    );
    expect(markdown).not.toContain('## Targets');
    expect(markdown).toContain('Smoke run');
  });
});

describe('the start-up scenarios in the report', () => {
  const startup = (scenario: string, runsMs: number[], targetMs?: number) => ({
    scenario,
    runsMs,
    medianMs: [...runsMs].sort((a, b) => a - b)[Math.floor(runsMs.length / 2)] as number,
    cpuMs: null,
    ...(targetMs ? { targetMs } : {}),
  });

  it('judges each scenario that has a target by its median, and lists every scenario', () => {
    const json = results([], {
      startup: [
        startup('server start to /health/ready, existing PGlite data directory', [2500, 1900, 1800], 2000),
        startup('`idp --help`', [900, 600, 700], 500),
        startup('server start to /health/ready, empty PGlite data directory', [9000]),
      ],
    });
    expect(verdict(json, 'server start to /health/ready, existing PGlite')).toEqual({
      target: 'server start to /health/ready, existing PGlite data directory ≤ 2 s',
      measured: '1900 ms (median of 3)',
      pass: true,
    });
    expect(verdict(json, '`idp --help`')).toMatchObject({ measured: '700 ms (median of 3)', pass: false });
    expect(verdict(json, 'server start to /health/ready, empty')).toBeUndefined();
    const markdown = renderMarkdown(json);
    expect(markdown).toContain('## Start-up');
    expect(markdown).toContain(
      '| server start to /health/ready, empty PGlite data directory | 9000 | – | – | 9000 |',
    );
  });

  it('says when the start-up was measured apart from the rest', () => {
    const json = results([], {
      startup: [startup('`idp --help`', [100], 500)],
      startupMeasuredAt: '2026-11-27T00:00:00.000Z',
    });
    expect(renderMarkdown(json)).toContain(
      'Start-up measured 2026-11-27T00:00:00.000Z, the rest 2026-11-21T00:00:00.000Z.',
    );
  });

  it('keeps the search at scale of the last results when a default run writes new ones', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'idp-bench-results-'));
    try {
      const fresh = results([row('userinfo (1000 distinct tokens)', 'idp', [100])]);
      // No earlier results: nothing to keep.
      expect(withLastScale(fresh, dir)).toBe(fresh);
      const scale: NonNullable<BenchResults['scale']> = {
        measuredAt: '2026-11-26T00:00:00.000Z',
        users: 10_000_000,
        connections: 8,
        seconds: 10,
        runs: 3,
        measurements: [row('search, common prefix ("u12"), 10,000,000 users, 8 clients', 'idp', [900])],
        plans: {},
      };
      writeResults(results([], { scale }), dir);
      const kept = withLastScale(fresh, dir);
      expect(kept.scale).toEqual(scale);
      expect(kept.measurements).toEqual(fresh.measurements);
      // A run that measured the scale itself keeps its own.
      const own = { ...fresh, scale: { ...scale, users: 20_000 } };
      expect(withLastScale(own, dir).scale?.users).toBe(20_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
