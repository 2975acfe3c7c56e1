/**
 * Where a target is missed: one line for each, saying where the time goes in that run, from the
 * costs the target was judged on (bench/targets.ts).
 */
import type { BenchResults } from './results.js';
import type { Cost, TargetVerdict } from './targets.js';

const costText = (cost: Cost, whose: string) =>
  [
    `${cost.serviceCpu ?? '?'} µs of ${whose} CPU per request`,
    ...(cost.postgresCpu !== null ? [`${cost.postgresCpu} µs of PostgreSQL's`] : []),
    ...(cost.walBytes !== null ? [`${cost.walBytes} bytes of WAL`] : []),
  ].join(', ');

/**
 * For each missed target, one line: where the time goes in this run (the service's CPU,
 * PostgreSQL's CPU and the WAL written per request, against the baselines it was judged on), or
 * where to look for targets that are not about per-request costs.
 */
export function whatRemains(_json: BenchResults, verdicts: TargetVerdict[]): string[] {
  const lines = new Set<string>();
  for (const verdict of verdicts.filter((each) => !each.pass)) {
    const [ours, ...baselines] = verdict.costs ?? [];
    if (ours) {
      const against = baselines.map((cost) => `; against ${costText(cost, 'its')} (${cost.label})`).join('');
      lines.add(`- **${verdict.topic}**: ${costText(ours, "the server's")} (${ours.label})${against}.`);
    } else if (verdict.note) {
      lines.add(`- **${verdict.topic}**: ${verdict.note}`);
    } else if (verdict.target.startsWith('server start') || verdict.target.startsWith('`idp')) {
      lines.add(
        '- **start-up**: see the Start-up section\'s CPU times and load average, and docs/performance.md "Start-up": a command on the embedded database with no server running opens it itself (PGlite\'s start, about 0.25 s, and the modules: 0.47 s on an idle machine, more while other work shares the cores); with a running server a command goes through the socket of the server instead.',
      );
    } else {
      lines.add(`- **${verdict.target}**: ${verdict.measured}.`);
    }
  }
  return [...lines];
}
