import type autocannon from 'autocannon';
import { describe, expect, it } from 'vitest';
import { DEVICE_POLL_SCENARIO, devicePolls } from '../../bench/device.js';
import { failedRequests, type Measurement } from '../../bench/harness.js';
import { type BenchResults, judgeTargets } from '../../bench/report.js';

/* The device_code poll scenario of the benchmark (bench/device.ts): what it sends, what counts as failed, its target. */

function run(counts: Record<string, number>, extra: { mismatches?: number; errors?: number } = {}) {
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
  const non2xx = Object.entries(counts)
    .filter(([status]) => !status.startsWith('2'))
    .reduce((sum, [, count]) => sum + count, 0);
  return {
    requests: { total },
    non2xx,
    errors: extra.errors ?? 0,
    mismatches: extra.mismatches ?? 0,
    statusCodeStats: Object.fromEntries(Object.entries(counts).map(([status, count]) => [status, { count }])),
  } as unknown as autocannon.Result;
}

function results(polls: Partial<Measurement>): BenchResults {
  return {
    measuredAt: '2026-11-28T00:00:00.000Z',
    smoke: false,
    machine: { cores: 2, node: 'v24', pinned: true },
    settings: {
      seconds: 10,
      warmupSeconds: 3,
      runs: 3,
      connections: 32,
      searchConnections: 8,
      searchSizes: [],
    },
    measurements: [
      {
        scenario: `${DEVICE_POLL_SCENARIO}, 100,000 waiting devices`,
        target: 'idp',
        requestsPerSecond: 5000,
        p50Ms: 5,
        p99Ms: 12,
        non2xx: 0,
        runs: [5000, 5000, 5000],
        cpuMicrosPerRequest: 90,
        postgresCpuMicrosPerRequest: 60,
        ...polls,
      },
    ],
    flows: [],
    searchPlans: {},
    ledgerChecks: {},
    memory: null,
  };
}

const verdictOf = (json: BenchResults) =>
  judgeTargets(json).find((each) => each.target.startsWith(DEVICE_POLL_SCENARIO));

describe('the device_code poll scenario', () => {
  it('polls as a public client with the codes in turn, each coming back after all the others', () => {
    const polls = devicePolls('pk_tv', ['dc_a', 'dc_b', 'dc_c']);
    const bodies = Array.from({ length: 4 }, () => polls.next?.().body);
    expect(bodies.map((body) => new URLSearchParams(body).get('device_code'))).toEqual([
      'dc_a',
      'dc_b',
      'dc_c',
      'dc_a',
    ]);
    expect(Object.fromEntries(new URLSearchParams(bodies[0]))).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      client_id: 'pk_tv',
      device_code: 'dc_a',
    });
    expect(polls.method).toBe('POST');
  });

  it('expects 400 authorization_pending: slow_down and any other answer count as failed', () => {
    const { expect: expected } = devicePolls('pk_tv', ['dc_a']);
    expect(expected?.status).toBe(400);
    expect(expected?.body('{"ok":false,"error":"authorization_pending","error_description":"…"}')).toBe(true);
    expect(expected?.body('{"ok":false,"error":"slow_down","error_description":"…"}')).toBe(false);
    // autocannon counts a body the check refuses as a mismatch, and a 400 among the answers.
    expect(failedRequests(run({ 400: 1000 }), expected)).toBe(0);
    expect(failedRequests(run({ 400: 1000 }, { mismatches: 3 }), expected)).toBe(3);
    expect(failedRequests(run({ 400: 990, 429: 6, 200: 4 }), expected)).toBe(10);
    expect(failedRequests(run({ 400: 1000 }, { errors: 2 }), expected)).toBe(2);
    // Other scenarios: every answer but a 2xx is a failure, as before.
    expect(failedRequests(run({ 200: 990, 400: 10 }, { errors: 1 }))).toBe(11);
  });

  it('is judged on the service CPU per answer: under 100 µs, with no failed answer', () => {
    expect(verdictOf(results({ cpuMicrosPerRequest: 99 }))).toMatchObject({
      measured: '99 µs',
      pass: true,
    });
    expect(verdictOf(results({ cpuMicrosPerRequest: 100 }))?.pass).toBe(false);
    expect(verdictOf(results({ cpuMicrosPerRequest: 40, non2xx: 1 }))?.pass).toBe(false);
    expect(verdictOf(results({ cpuMicrosPerRequest: null }))?.pass).toBe(false);
    expect(verdictOf(results({ cpuMicrosPerRequest: 150 }))?.costs?.[0]).toMatchObject({
      serviceCpu: 150,
      postgresCpu: 60,
    });
  });
});
