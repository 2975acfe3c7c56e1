import { createUser } from '../modules/accounts/accounts.service.js';
import { type Command, required, str, UsageError } from './command.js';

export const userCommands: Command[] = [
  {
    name: 'users create',
    usage:
      'idp users create --username U (--password P | --password-stdin) [--email E] [--email-verified] [--display-name D] [--verification-level 0|1|2]',
    summary: 'Create a user account',
    options: {
      username: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      email: { type: 'string' },
      'email-verified': { type: 'boolean' },
      'display-name': { type: 'string' },
      'verification-level': { type: 'string' },
    },
    run: async (ctx, args) => {
      const fromStdin = args.values['password-stdin'] === true;
      if (fromStdin && str(args, 'password') !== undefined) {
        throw new UsageError('give either --password or --password-stdin, not both');
      }
      // One trailing newline is the terminal's, not the password's.
      const password = fromStdin ? (ctx.stdin ?? '').replace(/\r?\n$/, '') : required(args, 'password');
      if (args.values['email-verified'] === true && str(args, 'email') === undefined) {
        throw new UsageError('--email-verified needs --email');
      }
      return createUser(ctx.db, ctx.clock, {
        username: required(args, 'username'),
        password,
        email: str(args, 'email'),
        emailVerified: args.values['email-verified'] === true,
        displayName: str(args, 'display-name'),
        verificationLevel: str(args, 'verification-level') ?? 0,
      });
    },
  },
];
