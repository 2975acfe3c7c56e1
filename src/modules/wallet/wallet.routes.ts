import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../context.js';
import { type AccessTokenContext, authenticateBearer } from '../../http/bearer-auth.js';
import { walletCharges } from '../../http/metrics.js';
import { RequestValues } from '../../http/request-values.js';
import { AccessDenied, IdempotencyConflict, InsufficientFunds } from '../../lib/errors.js';
import { lookUpClient } from '../oauth/client-auth.service.js';
import { rollups } from '../rollups/rollup-recorder.js';
import {
  balanceResponseSchema,
  chargeBodySchema,
  chargeResponseSchema,
  transactionsQuerySchema,
  transactionsResponseSchema,
} from './wallet.schemas.js';
import {
  type ChargeOutcome,
  charge,
  getBalance,
  listTransactions,
  type WalletActor,
} from './wallet.service.js';

/**
 * The wallet: balance, charge, transactions. Every route needs
 * a valid bearer token (401) whose grant includes the `wallet` scope and whose client holds the
 * wallet right now (403 `access_denied`); both are checked before the body or query is looked at.
 */
export const walletRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const actors = new RequestValues<WalletActor>('requireWalletAccess');

  /** preValidation: runs after the body is parsed and before it is validated. */
  const requireWalletAccess = async (request: FastifyRequest): Promise<void> => {
    const token: AccessTokenContext = await authenticateBearer(request, deps);
    if (!token.scopes.includes('wallet')) {
      throw new AccessDenied('This access token was not granted the wallet scope.');
    }
    // The client cache drops a client on every instance as soon as its row changes, so an operator
    // who withdraws the right stops the client at once.
    const client = await lookUpClient(deps.db, deps.ctx, token.clientId);
    if (!client?.wallet || client.disabledAt !== null) {
      throw new AccessDenied('This application does not hold the wallet right.');
    }
    actors.set(request, {
      userId: token.userId,
      clientPk: token.clientPk,
      clientId: token.clientId,
      ip: request.ip,
    });
  };

  routes.get(
    '/api/v1/wallet/balance',
    {
      config: { auth: 'bearer', description: "The token user's coin balance: {ok, balance, currency}" },
      schema: { response: { 200: balanceResponseSchema } },
      preValidation: requireWalletAccess,
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return getBalance(deps.db, actors.of(request).userId);
    },
  );

  routes.post(
    '/api/v1/wallet/charge',
    {
      config: {
        auth: 'bearer',
        description:
          'Charges the token user: {amount, currency: "COIN", description, idempotency_key} → 201 {ok, transaction, balance}; a replayed key → 200',
      },
      // Validated after the access checks of preValidation: a caller without access learns nothing more.
      schema: { body: chargeBodySchema, response: { 200: chargeResponseSchema, 201: chargeResponseSchema } },
      preValidation: requireWalletAccess,
    },
    async (request, reply) => {
      let outcome: ChargeOutcome;
      try {
        outcome = await charge(deps.db, deps.ctx, actors.of(request), request.body);
      } catch (error) {
        if (error instanceof IdempotencyConflict) walletCharges.inc({ outcome: 'conflict' });
        else if (error instanceof InsufficientFunds) walletCharges.inc({ outcome: 'insufficient_funds' });
        throw error;
      }
      walletCharges.inc({ outcome: outcome.replayed ? 'replayed' : 'charged' });
      if (!outcome.replayed) rollups.charge(request.body.amount);
      reply.header('cache-control', 'no-store');
      if (outcome.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(outcome.replayed ? 200 : 201).send(outcome.body);
    },
  );

  routes.get(
    '/api/v1/wallet/transactions',
    {
      config: {
        auth: 'bearer',
        description:
          'The charges this client made to the token user, newest first: limit (default 20, max 100), cursor → {ok, transactions, next_cursor}',
      },
      schema: { querystring: transactionsQuerySchema, response: { 200: transactionsResponseSchema } },
      preValidation: requireWalletAccess,
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return listTransactions(deps.db, actors.of(request), request.query);
    },
  );
};
