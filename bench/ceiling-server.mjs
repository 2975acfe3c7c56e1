// The ceiling: a bare Fastify JSON route in the same process setup as the service.
import Fastify from 'fastify';

const app = Fastify();
app.get('/', async () => ({ ok: true, sub: '1', name: 'ceiling' }));
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 3901) });
console.log(`Server listening at ${address}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
