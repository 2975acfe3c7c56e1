import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMAND_HELP } from '../../src/cli/help-texts.js';
import { commands, prepareCommand } from '../../src/cli/run-command.js';

/* `idp … --help` explains every group, command, option and argument, with an example (no database). */

const output = (argv: string[]) => {
  const prepared = prepareCommand(argv);
  if (!('exitCode' in prepared)) throw new Error(`${argv.join(' ')} did not answer with help`);
  return prepared;
};

describe('idp <command> --help', () => {
  for (const command of commands) {
    it(`explains every option and argument of "${command.name}", with an example`, () => {
      const help = output([...command.name.split(' '), '--help']);
      expect(help.exitCode).toBe(0);
      expect(help.stdout).toContain(`usage: ${command.usage}`);
      expect(help.stdout).toContain(command.summary);
      const texts = COMMAND_HELP[command.name];
      expect(texts, `no help texts for ${command.name}`).toBeDefined();
      for (const option of [...Object.keys(command.options), 'json', 'help']) {
        expect(help.stdout).toMatch(new RegExp(`^  --${option} +\\S.{9,}$`, 'm'));
      }
      // The positional arguments: as many explained as the command takes, each named in its usage.
      const positionals = Object.keys(texts?.explain ?? {}).filter((name) => !(name in command.options));
      expect(positionals).toHaveLength(command.positionals ?? 0);
      for (const name of positionals) {
        expect(command.usage).toContain(name);
        expect(help.stdout).toMatch(new RegExp(`^  ${name.replace(/\|/g, '\\|')} +\\S.{9,}$`, 'm'));
      }
      expect(help.stdout).toMatch(new RegExp(`Example:\\n {2}.*idp ${command.name}\\b`));
    });
  }

  it('has no help texts for a command that does not exist', () => {
    expect(Object.keys(COMMAND_HELP).sort()).toEqual(commands.map((command) => command.name).sort());
  });
});

describe('idp <group> --help', () => {
  const groups = [...new Set(commands.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]))];

  it('lists each command of every group with its summary', () => {
    expect(groups).toEqual(expect.arrayContaining(['users', 'clients', 'keys', 'wallet', 'mail']));
    for (const group of groups) {
      for (const words of [
        [group as string, '--help'],
        [group as string, 'help'],
        [group as string, '-h'],
      ]) {
        const help = output(words);
        expect(help.exitCode).toBe(0);
        for (const command of commands.filter((c) => c.name.startsWith(`${group} `))) {
          expect(help.stdout).toContain(command.usage);
          expect(help.stdout).toContain(command.summary);
        }
      }
    }
  });

  it('answers a group named alone with its help on stderr and exit status 1', () => {
    const alone = output(['clients']);
    expect(alone.exitCode).toBe(1);
    expect(alone.stdout).toBe('');
    expect(alone.stderr).toContain('idp clients rotate-secret CLIENT_ID');
  });
});

describe('idp --version', () => {
  it("prints the package's version", () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-V'])
      expect(output([flag])).toEqual({ exitCode: 0, stdout: `idp ${version}\n`, stderr: '' });
  });
});
