import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../lib/paths.js';
import { adminCommands } from './admins.commands.js';
import { auditCommands } from './audit.commands.js';
import { clientCommands } from './clients.commands.js';
import { type Command, type CommandContext, type ParsedArgs, UsageError } from './command.js';
import { demoCommands } from './demo.commands.js';
import { COMMAND_HELP, COMMON_OPTIONS } from './help-texts.js';
import { keyCommands } from './keys.commands.js';
import { mailCommands } from './mail.commands.js';
import { migrateCommands } from './migrate.commands.js';
import { formatListing } from './output.js';
import { platformCommands } from './platform.commands.js';
import { premiumCommands } from './premium.commands.js';
import { providerCommands } from './providers.commands.js';
import { registrationTokenCommands } from './registration-tokens.commands.js';
import { userCommands } from './users.commands.js';
import { walletCommands } from './wallet.commands.js';

export const commands: readonly Command[] = [
  ...migrateCommands,
  ...userCommands,
  ...clientCommands,
  ...registrationTokenCommands,
  ...providerCommands,
  ...platformCommands,
  ...keyCommands,
  ...premiumCommands,
  ...walletCommands,
  ...adminCommands,
  ...auditCommands,
  ...mailCommands,
  ...demoCommands,
];

/** What a command printed and how it ended; the same whether it ran here or in the server. */
export interface CommandOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export function helpText(): string {
  const lines = commands.map((command) => `  ${command.usage}\n      ${command.summary}`);
  return [
    'idp: the operator CLI of the identity provider',
    '',
    'Usage: idp <command> [options] [--json]',
    '',
    ...lines,
    '',
    'Every command takes --json: print exactly one JSON object on stdout. Errors go to stderr, exit status 1.',
    '"idp <group> --help" lists a group\'s commands; "idp <command> --help" explains every option, with an example.',
    '"idp --version" prints the version.',
    "It uses the server's DATABASE_URL / DATA_DIR; with the embedded database it talks to a running server.",
  ].join('\n');
}

/** The groups of two-word commands (`users`, `clients`…), each with its commands. */
function groupOf(word: string | undefined): Command[] {
  return word === undefined ? [] : commands.filter((command) => command.name.startsWith(`${word} `));
}

/** `idp <group> --help`: the group's commands, each with its summary. */
function groupHelp(group: string, members: readonly Command[]): string {
  return [
    `idp ${group}: ${members.map((command) => command.name.split(' ')[1]).join(', ')}`,
    '',
    ...members.map((command) => `  ${command.usage}\n      ${command.summary}`),
    '',
    `Run "idp ${group} <command> --help" for a command's options and an example.`,
  ].join('\n');
}

/** `idp <command> --help`: the usage, what it does, every option and argument, and an example. */
export function commandHelp(command: Command): string {
  const help = COMMAND_HELP[command.name];
  const explained = Object.entries({ ...help?.explain, ...COMMON_OPTIONS });
  const width = Math.max(...explained.map(([name]) => optionLabel(command, name).length));
  return [
    `usage: ${command.usage}`,
    '',
    command.summary,
    '',
    ...explained.map(([name, text]) => `  ${optionLabel(command, name).padEnd(width)}  ${text}`),
    ...(help ? ['', 'Example:', `  ${help.example}`] : []),
  ].join('\n');
}

/** An option as typed (`--name`), or a positional argument as the usage line names it (`U`). */
function optionLabel(command: Command, name: string): string {
  return name in command.options || name in COMMON_OPTIONS ? `--${name}` : name;
}

/** The package's version, for `idp --version`. */
function version(): string {
  const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

const HELP_WORDS = new Set(['--help', '-h', 'help']);

export interface PreparedCommand {
  command: Command;
  args: ParsedArgs;
  json: boolean;
}

/** Finds the command named by argv and parses its options; no database is needed for this. */
export function prepareCommand(argv: readonly string[]): PreparedCommand | CommandOutput {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    return {
      exitCode: argv.length === 0 ? 1 : 0,
      stdout: argv.length === 0 ? '' : `${helpText()}\n`,
      stderr: argv.length === 0 ? `${helpText()}\n` : '',
    };
  }
  if (argv[0] === '--version' || argv[0] === '-V')
    return { exitCode: 0, stdout: `idp ${version()}\n`, stderr: '' };
  const group = groupOf(argv[0]);
  if (group.length > 0 && (argv.length === 1 || HELP_WORDS.has(argv[1] as string))) {
    const text = `${groupHelp(argv[0] as string, group)}\n`;
    // `idp users` alone is a usage mistake that shows the way; asking for help is not.
    return argv.length === 1
      ? { exitCode: 1, stdout: '', stderr: text }
      : { exitCode: 0, stdout: text, stderr: '' };
  }
  const command =
    commands.find((c) => c.name === `${argv[0]} ${argv[1]}`) ?? commands.find((c) => c.name === argv[0]);
  if (!command) {
    const words = argv.slice(0, 2).filter((word, index) => index === 0 || !word.startsWith('-'));
    return failure(
      `unknown command "${words.join(' ')}"; run "idp --help" for the list\nusage: idp <command> [options] [--json]`,
    );
  }
  const rest = argv.slice(command.name.split(' ').length);
  try {
    const parsed = parseArgs({
      args: positionalsLast(rest, command),
      options: { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    const json = parsed.values.json === true;
    if (parsed.values.help) return { exitCode: 0, stdout: `${commandHelp(command)}\n`, stderr: '' };
    const expected = command.positionals ?? 0;
    if (parsed.positionals.length !== expected) {
      throw new UsageError(
        expected === 0
          ? `unexpected argument "${parsed.positionals[0]}"`
          : `expected ${expected} argument${expected > 1 ? 's' : ''}, got ${parsed.positionals.length}`,
      );
    }
    const args = { values: parsed.values as ParsedArgs['values'], positionals: parsed.positionals };
    command.check?.(args);
    return { command, json, args };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return failure(
      `${message.replace(/\. To specify a positional argument.*$/s, '')}\nusage: ${command.usage}`,
    );
  }
}

/**
 * parseArgs takes anything starting with `-` for an option, but a key id is base64url (`-S3WE…`).
 * Only declared options and `--word` (so a typo is still reported) stay options; other values move
 * after `--`, where parseArgs reads them as positionals.
 */
function positionalsLast(args: readonly string[], command: Command): string[] {
  const declared = new Map<string, { type: string }>(
    Object.entries({ ...command.options, json: { type: 'boolean' }, help: { type: 'boolean' } }).map(
      ([name, spec]) => [`--${name}`, spec as { type: string }],
    ),
  );
  const options: string[] = [];
  const values: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === '--') {
      values.push(...args.slice(index + 1));
      break;
    }
    const spec = declared.get(arg.split('=')[0] as string);
    if (spec?.type === 'string' && !arg.includes('=') && index + 1 < args.length) {
      // A string option's value is the next argument, whatever it starts with.
      options.push(`${arg}=${args[++index]}`);
    } else if (spec || arg === '-h' || /^--[a-z][a-z-]*(=|$)/.test(arg)) {
      options.push(arg);
    } else {
      values.push(arg);
    }
  }
  return values.length > 0 ? [...options, '--', ...values] : options;
}

export function failure(message: string): CommandOutput {
  return { exitCode: 1, stdout: '', stderr: `idp: ${message}\n` };
}

/** What running any command loads: here rather than with the command table, which `idp --help` loads alone. */
export function preloadExecution() {
  return Promise.all([import('../lib/errors.js'), import('../modules/audit/audit.repository.js')]);
}

/** Runs a prepared command against a database and renders its output. */
export async function executeCommand(prepared: PreparedCommand, ctx: CommandContext): Promise<CommandOutput> {
  const { command, args, json } = prepared;
  const refusal = command.refuse?.(ctx.config);
  if (refusal) return failure(refusal);
  const [{ ApiError }, { recordAudit }] = await preloadExecution();
  try {
    const result = await command.run(ctx, args);
    const event = command.audit?.(result, args);
    if (event) await recordAudit(ctx.db, { ...event, at: ctx.clock.now(), actor: 'operator' });
    const stdout = json ? JSON.stringify(result) : (command.text ?? formatListing)(result);
    const failed = command.failure?.(result);
    return failed === undefined
      ? { exitCode: 0, stdout: `${stdout}\n`, stderr: '' }
      : { exitCode: 1, stdout: `${stdout}\n`, stderr: `idp: ${failed}\n` };
  } catch (error) {
    if (error instanceof UsageError) return failure(`${error.message}\nusage: ${command.usage}`);
    if (error instanceof ApiError) return failure(error.description);
    throw error;
  }
}

/** Parses and runs argv: what the CLI does directly and what the server does for a forwarded command. */
export async function runCommand(argv: readonly string[], ctx: CommandContext): Promise<CommandOutput> {
  const prepared = prepareCommand(argv);
  return 'exitCode' in prepared ? prepared : executeCommand(prepared, ctx);
}
