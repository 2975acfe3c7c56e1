import { describe, expect, it } from 'vitest';
import { prepareCommand } from '../../src/cli/run-command.js';

/* How the CLI reads its arguments: values may start with "-" (a base64url key id often does). */

function parsed(argv: string[]) {
  const prepared = prepareCommand(argv);
  if ('exitCode' in prepared) throw new Error(prepared.stderr);
  return { positionals: prepared.args.positionals, values: prepared.args.values, json: prepared.json };
}

describe('CLI arguments', () => {
  it('reads a positional value that starts with "-" as a value', () => {
    expect(parsed(['keys', 'retire', '-S3WESndoMS5q8YovTAsEMDoujB9NI8tA1-Sdi8JQyI', '--json'])).toMatchObject(
      {
        positionals: ['-S3WESndoMS5q8YovTAsEMDoujB9NI8tA1-Sdi8JQyI'],
        json: true,
      },
    );
    expect(parsed(['keys', 'retire', '--json', '--', '--S3WESndoMS5q8YovTAsEMDoujB9NI8tA1'])).toMatchObject({
      positionals: ['--S3WESndoMS5q8YovTAsEMDoujB9NI8tA1'],
    });
  });

  it('reads the value of a string option even when it starts with "-"', () => {
    expect(parsed(['wallet', 'credit', 'ann', '5', '--description', '-5% promo'])).toMatchObject({
      positionals: ['ann', '5'],
      values: { description: '-5% promo' },
    });
  });

  it('still reports an unknown option as one', () => {
    const prepared = prepareCommand(['keys', 'retire', 'kid', '--bogus']);
    expect(prepared).toMatchObject({
      exitCode: 1,
      stderr: expect.stringMatching(/Unknown option '--bogus'/),
    });
  });
});
