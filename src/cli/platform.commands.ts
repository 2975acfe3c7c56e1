import { type Command, required, str } from './command.js';

/** Imported when a command runs, not with the command table. */
const platform = () => import('../modules/platform/platform.service.js');

export const platformCommands: Command[] = [
  {
    name: 'status set',
    usage: 'idp status set operational|degraded|maintenance [--message M]',
    summary: 'Set the overall platform status shown at /api/v1/platform/status',
    options: { message: { type: 'string' } },
    positionals: 1,
    run: async (ctx, args) =>
      (await platform()).setPlatformStatus(
        ctx.db,
        { config: ctx.config, clock: ctx.clock },
        {
          status: args.positionals[0] ?? '',
          message: str(args, 'message'),
        },
      ),
  },
  {
    name: 'incidents open',
    usage: 'idp incidents open --title T [--message M] [--severity minor|major|critical]',
    summary: 'Open an incident (listed by the platform status until resolved)',
    options: { title: { type: 'string' }, message: { type: 'string' }, severity: { type: 'string' } },
    run: async (ctx, args) =>
      (await platform()).openIncident(
        ctx.db,
        { config: ctx.config, clock: ctx.clock },
        {
          title: required(args, 'title'),
          message: str(args, 'message'),
          severity: str(args, 'severity') as 'minor' | 'major' | 'critical' | undefined,
        },
      ),
  },
  {
    name: 'incidents resolve',
    usage: 'idp incidents resolve ID',
    summary: 'Resolve an open incident',
    options: {},
    positionals: 1,
    run: async (ctx, args) =>
      (await platform()).resolveIncident(
        ctx.db,
        { config: ctx.config, clock: ctx.clock },
        args.positionals[0] ?? '',
      ),
  },
];
