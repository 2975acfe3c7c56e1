import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
// @ts-expect-error bin/ is plain JavaScript without declarations
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../bin/launch.js';
import { assertServable, loadConfig } from '../src/config.js';

/**
 * The container packaging, checked without a Docker engine: the Dockerfile and docker-compose.yml
 * are parsed and held to what the service needs at run time.
 */
const root = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

// ---------------------------------------------------------------------------------------------
// A small Dockerfile reader: instructions grouped by stage, continuation lines joined.

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  index: number;
  base: string;
  name: string | undefined;
  instructions: Instruction[];
}

function parseDockerfile(text: string): Stage[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('#')) continue; // comments and parser directives, also inside continuations
    if (line === '') continue;
    const continued = line.endsWith('\\');
    pending += `${continued ? line.slice(0, -1) : line} `;
    if (continued) continue;
    const match = /^(\S+)\s*(.*)$/s.exec(pending.trim());
    pending = '';
    if (match)
      instructions.push({ keyword: (match[1] as string).toUpperCase(), args: (match[2] as string).trim() });
  }
  if (pending) throw new Error('the Dockerfile ends inside a line continuation');

  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const words = instruction.args.split(/\s+/).filter((word) => !word.startsWith('--platform'));
      const as = words.findIndex((word) => word.toUpperCase() === 'AS');
      stages.push({
        index: stages.length,
        base: words[0] as string,
        name: as >= 0 ? words[as + 1]?.toLowerCase() : undefined,
        instructions: [],
      });
    } else {
      const stage = stages.at(-1);
      if (stage) stage.instructions.push(instruction);
    }
  }
  return stages;
}

/** Splits `COPY [--flag=value …] src… dest` (shell or JSON form). */
function parseCopy(args: string): { from: string | undefined; sources: string[]; destination: string } {
  const flags: Record<string, string> = {};
  let rest = args;
  for (
    let flag = /^--([a-z-]+)(?:=(\S+))?\s+/.exec(rest);
    flag;
    flag = /^--([a-z-]+)(?:=(\S+))?\s+/.exec(rest)
  ) {
    flags[flag[1] as string] = flag[2] ?? 'true';
    rest = rest.slice(flag[0].length);
  }
  const words: string[] = rest.startsWith('[') ? JSON.parse(rest) : rest.split(/\s+/);
  expect(words.length, `COPY ${args} needs a source and a destination`).toBeGreaterThanOrEqual(2);
  return { from: flags.from, sources: words.slice(0, -1), destination: words.at(-1) as string };
}

/** `ENV A=1 B=2` and the legacy `ENV A 1`. */
function parseEnv(args: string): Record<string, string> {
  if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(args)) {
    const [key, ...value] = args.split(/\s+/);
    return { [key as string]: value.join(' ') };
  }
  const env: Record<string, string> = {};
  for (const match of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|\S*)/g)) {
    env[match[1] as string] = (match[2] as string).replace(/^(["'])(.*)\1$/, '$2');
  }
  return env;
}

/** The exec-form command of `CMD [...]` or `HEALTHCHECK [--options] CMD [...]`. */
function execForm(args: string): string[] {
  const json = args.replace(/^(--\S+\s+)*(CMD\s+)?/i, '');
  expect(json.startsWith('['), `"${args}" is not in exec form`).toBe(true);
  const command: unknown = JSON.parse(json);
  expect(Array.isArray(command) && command.every((word) => typeof word === 'string')).toBe(true);
  return command as string[];
}

/** The .dockerignore patterns as regular expressions (`*` and `?` within one path segment). */
function dockerignore(): RegExp[] {
  return read('.dockerignore')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#') && !line.startsWith('!'))
    .map((pattern) => {
      const body = pattern
        .replace(/^\/+|\/+$/g, '')
        .split('')
        .map((char) =>
          char === '*' ? '[^/]*' : char === '?' ? '[^/]' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
        )
        .join('');
      return new RegExp(`^${body}(/.*)?$`);
    });
}

const isIgnored = (file: string) =>
  dockerignore().some((pattern) => pattern.test(path.posix.normalize(file)));

const stages = parseDockerfile(read('Dockerfile'));
const runtime = stages.at(-1) as Stage;
const of = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);
const runs = (stage: Stage) => of(stage, 'RUN').map((i) => i.args);
const stageNamed = (ref: string): Stage | undefined =>
  stages.find((stage) => stage.name === ref.toLowerCase()) ?? stages[Number(ref)];

/** A stage and the stages it is built on, nearest first. */
function lineage(stage: Stage): Stage[] {
  const parent = stages.slice(0, stage.index).find((s) => s.name === stage.base.toLowerCase());
  return parent ? [stage, ...lineage(parent)] : [stage];
}

/** The WORKDIR a stage ends with, inherited from the stage it is built on. */
const workdirOf = (stage: Stage) =>
  lineage(stage)
    .map((s) => of(s, 'WORKDIR').at(-1)?.args)
    .find(Boolean);
const imageOf = (stage: Stage) => (lineage(stage).at(-1) as Stage).base;
const runtimeEnv = Object.assign({}, ...of(runtime, 'ENV').map((i) => parseEnv(i.args))) as Record<
  string,
  string
>;

/** A stage's COPY instructions: the stage they come from (none: the build context), sources, destination. */
function copiesInto(stage: Stage) {
  return of(stage, 'COPY').map((i) => parseCopy(i.args));
}

// ---------------------------------------------------------------------------------------------
// A small docker-compose reader: Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}`.

function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (_, name, operator, word) => {
    const set = env[name] !== undefined && (env[name] !== '' || !operator?.startsWith(':'));
    if (set) return env[name] as string;
    if (operator?.endsWith('?')) throw new Error(`${name}: ${word}`);
    return operator?.endsWith('-') ? word : '';
  });
}

type Service = Record<string, unknown> & {
  image?: string;
  build?: string | { context?: string };
  environment?: Record<string, string | number | boolean | null> | string[];
  healthcheck?: { test?: string | string[]; interval?: string; timeout?: string; retries?: number };
  depends_on?: string[] | Record<string, { condition?: string }>;
  ports?: Array<string | number | { target?: number; published?: string | number }>;
  volumes?: Array<string | { type?: string; source?: string; target?: string }>;
};

const compose = parseYaml(read('docker-compose.yml')) as {
  services?: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const services = compose.services ?? {};

function environmentOf(service: Service | undefined, env: Record<string, string | undefined>) {
  const entries: Array<[string, string]> = Array.isArray(service?.environment)
    ? service.environment.map((entry) => {
        const at = entry.indexOf('=');
        return at < 0 ? [entry, env[entry] ?? ''] : [entry.slice(0, at), entry.slice(at + 1)];
      })
    : Object.entries(service?.environment ?? {}).map(([key, value]) => [
        key,
        value == null ? '' : String(value),
      ]);
  return Object.fromEntries(entries.map(([key, value]) => [key, interpolate(value, env)]));
}

const healthcheckCommand = (service: Service | undefined): string[] => {
  const test = service?.healthcheck?.test;
  if (typeof test === 'string') return ['CMD-SHELL', test];
  return test ?? [];
};

/** What a user starting the stack provides, as in the comment at the top of docker-compose.yml. */
const shellEnv = {
  COOKIE_SECRET: 'a-local-cookie-secret-of-more-than-32-characters',
  SMTP_URL: 'smtp://mailer:secret@smtp.example.com:587',
};

/** The variables a compose file reads from the shell or .env (`${NAME…}`). */
const interpolated = (file: string) =>
  new Set([...read(file).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1] as string));

/** .env.example as docker compose reads a .env: `NAME=value` lines, comments and blanks skipped. */
const envExample = Object.fromEntries(
  read('.env.example')
    .split(/\r?\n/)
    .filter((line) => /^[A-Z][A-Z0-9_]*=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
) as Record<string, string>;

// ---------------------------------------------------------------------------------------------

describe('Dockerfile', () => {
  it('builds in several stages on one pinned official Node image', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) {
      const image = imageOf(stage);
      expect(image, `stage ${stage.name ?? stage.index}`).toMatch(/^node:\d+(\.\d+){0,2}-[a-z]+(-slim)?$/);
    }
    expect(new Set(stages.map(imageOf)).size).toBe(1);
    const major = Number(/^node:(\d+)/.exec(imageOf(runtime))?.[1]);
    const engines = JSON.parse(read('package.json')).engines.node as string;
    expect(major).toBeGreaterThanOrEqual(Number(/\d+/.exec(engines)?.[0]));
  });

  it('compiles the TypeScript in a build stage, to the dist/ layout bin/launch.js runs', () => {
    const build = stages.find((stage) => runs(stage).some((run) => /\bnpm run build\b/.test(run)));
    expect(build, 'a stage runs `npm run build`').toBeDefined();
    expect(build).not.toBe(runtime);
    expect(runs(build as Stage).some((run) => /\bnpm ci\b/.test(run) && !/--omit[= ]dev/.test(run))).toBe(
      true,
    );
    const copied = copiesInto(build as Stage).flatMap((copy) => copy.sources);
    for (const needed of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'src',
      'migrations',
    ])
      expect(
        lineage(build as Stage).some((stage) =>
          copiesInto(stage).some((copy) => copy.sources.includes(needed)),
        ) || copied.includes('.'),
        `the build stage copies ${needed}`,
      ).toBe(true);

    // tsc -p tsconfig.build.json writes src/main.ts to dist/src/main.js, as bin/launch.js expects.
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    expect(scripts.build).toMatch(/tsc -p tsconfig\.build\.json/);
    const options = JSON.parse(read('tsconfig.json')).compilerOptions as Record<string, string>;
    expect(path.normalize(options.outDir as string)).toBe('dist');
    expect(path.normalize(options.rootDir as string)).toBe('.');
    expect(JSON.parse(read('tsconfig.build.json')).include).toEqual(
      expect.arrayContaining(['src', 'migrations']),
    );
    expect(read('bin/launch.js')).toMatch(/path\.join\(root, 'dist', 'src', /);
    expect(read('bin/server.js')).toContain("launch('main')");
    expect(read('bin/idp.js')).toContain("launch('cli/main')");
  });

  it('installs production dependencies alone, with install scripts (argon2 needs its own)', () => {
    const nodeModules = copiesInto(runtime).find((copy) =>
      copy.sources.some((source) => /node_modules\/?$/.test(source)),
    );
    expect(nodeModules?.from, 'the runtime copies node_modules from another stage').toBeDefined();
    const deps = stageNamed(nodeModules?.from as string) as Stage;
    const installs = runs(deps).filter((run) => /\bnpm (ci|install|i)\b/.test(run));
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) {
      expect(install).toMatch(/--omit[= ]dev/);
      expect(install).not.toMatch(/--ignore-scripts/);
    }
    expect(JSON.parse(read('package.json')).allowScripts?.argon2).toBe(true);
    // Where argon2's prebuilt binary does not load, its install script compiles it with node-gyp.
    const tools = lineage(deps).flatMap(runs).join('\n');
    for (const tool of ['python3', 'make', 'g++'])
      expect(tools).toMatch(new RegExp(`apt-get install[^\n]*\\s${tool.replace(/\+/g, '\\+')}(\\s|$)`, 'm'));
  });

  it('lets the runtime user run the CLI as `npx idp` (npm chmods the linked bin/idp.js)', () => {
    const user = of(runtime, 'USER').at(-1)?.args.split(':')[0] as string;
    const chownedByRun = of(runtime, 'RUN').some((i) =>
      new RegExp(`chown\\s+(-R\\s+)?${user}(:\\S+)?\\s+[^&;]*(/app/)?bin/idp\\.js\\b`).test(i.args),
    );
    const chownedByCopy = of(runtime, 'COPY').some(
      (i) => new RegExp(`--chown=${user}\\b`).test(i.args) && / bin\b/.test(i.args),
    );
    expect(chownedByRun || chownedByCopy).toBe(true);
    expect(JSON.parse(read('package.json')).bin).toEqual({ idp: 'bin/idp.js' });
  });

  it('runs as a non-root user with a data volume it owns', () => {
    const users = of(runtime, 'USER').map((i) => i.args.split(':')[0]);
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0', '']).not.toContain(users.at(-1));
    const user = users.at(-1) as string;

    expect(runtimeEnv.DATA_DIR).toBe('/data');
    const volumes = of(runtime, 'VOLUME').flatMap((i) =>
      i.args.startsWith('[') ? (JSON.parse(i.args) as string[]) : i.args.split(/\s+/),
    );
    expect(volumes).toContain(runtimeEnv.DATA_DIR);
    // Changes to a path after VOLUME declares it are discarded, so the chown must come first.
    const volumeAt = runtime.instructions.findIndex((i) => i.keyword === 'VOLUME');
    const chown = runtime.instructions.findIndex(
      (i) =>
        i.keyword === 'RUN' &&
        new RegExp(`chown\\s+(-R\\s+)?${user}(:\\S+)?\\s+${runtimeEnv.DATA_DIR}\\b`).test(i.args),
    );
    expect(chown, `a RUN gives ${runtimeEnv.DATA_DIR} to ${user} before VOLUME`).toBeGreaterThanOrEqual(0);
    expect(chown).toBeLessThan(volumeAt);
  });

  it('listens on all interfaces in production mode', () => {
    expect(runtimeEnv).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '3000' });
    // The allocator's setting of `npm start` and the benchmark (bin/launch.js).
    expect(runtimeEnv).toMatchObject(SERVER_ENV);
    expect(of(runtime, 'EXPOSE').flatMap((i) => i.args.split(/\s+/))).toContain(runtimeEnv.PORT);
  });

  it('checks its health at /health/ready with Node itself, and starts bin/server.js', () => {
    const [healthcheck, ...more] = of(runtime, 'HEALTHCHECK');
    expect(more).toEqual([]);
    const command = execForm((healthcheck as Instruction).args);
    expect(command[0]).toBe('node'); // slim images have no curl or wget
    expect(command.join(' ')).toContain('/health/ready');
    expect(execForm(of(runtime, 'CMD').at(-1)?.args ?? '')).toEqual([
      'node',
      ...(SERVER_NODE_FLAGS as string[]),
      'bin/server.js',
    ]);
    expect(of(runtime, 'ENTRYPOINT')).toEqual([]);
    expect(of(runtime, 'STOPSIGNAL').map((i) => i.args)).toEqual(['SIGTERM']);
  });

  it('puts only what the service runs into the runtime image', () => {
    const copies = copiesInto(runtime);
    for (const copy of copies) {
      expect(copy.sources, 'no `COPY . .` into the runtime stage').not.toContain('.');
      expect(
        copy.sources.map((source) => source.replace(/^\.\/|\/$/g, '')).filter((s) => s === 'src'),
      ).toEqual([]);
    }
    const contextSources = copies.filter((copy) => !copy.from).flatMap((copy) => copy.sources);
    expect(contextSources).toEqual(expect.arrayContaining(['package.json', 'bin']));
    const fromStages = copies
      .filter((copy) => copy.from)
      .flatMap((copy) => copy.sources.map((s) => path.posix.basename(s)));
    expect(fromStages).toEqual(expect.arrayContaining(['node_modules', 'dist']));
    // Directories the service reads at run time: once they exist, the image must carry them.
    for (const assets of ['views', 'public'].filter((dir) => existsSync(path.join(root, dir))))
      expect(
        contextSources.map((source) => source.replace(/^\.\/|\/$/g, '')),
        `COPY ${assets}`,
      ).toContain(assets);
  });

  it('copies only paths that exist in the repository or that an earlier stage produces', () => {
    for (const stage of stages) {
      expect(workdirOf(stage), `stage ${stage.name ?? stage.index} has an absolute WORKDIR`).toMatch(/^\//);
      for (const copy of copiesInto(stage)) {
        for (const source of copy.sources) {
          if (!copy.from) {
            if (source === '.') continue;
            expect(existsSync(path.join(root, source)), `${source} exists in the repository`).toBe(true);
            expect(isIgnored(source), `${source} is not excluded by .dockerignore`).toBe(false);
            continue;
          }
          const producer = stageNamed(copy.from);
          expect(producer, `stage ${copy.from} exists`).toBeDefined();
          expect((producer as Stage).index).toBeLessThan(stage.index);
          const producerWorkdir = workdirOf(producer as Stage) as string;
          const relative = path.posix.relative(producerWorkdir, path.posix.resolve(producerWorkdir, source));
          const chain = lineage(producer as Stage);
          const produced =
            (relative === 'dist' &&
              chain.some((s) => runs(s).some((run) => /\bnpm run build\b/.test(run)))) ||
            (relative === 'node_modules' &&
              chain.some((s) => runs(s).some((run) => /\bnpm ci\b/.test(run)))) ||
            chain.some((s) =>
              copiesInto(s).some(
                (c) => !c.from && c.sources.some((src) => src.replace(/^\.\/|\/$/g, '') === relative),
              ),
            );
          expect(produced, `stage ${copy.from} produces ${relative}`).toBe(true);
        }
      }
    }
  });
});

describe('.dockerignore', () => {
  it('keeps local installs, data, secrets and history out of the build context', () => {
    for (const file of ['node_modules', 'node_modules/argon2', 'data', 'data/pglite', '.git', '.env', 'dist'])
      expect(isIgnored(file), file).toBe(true);
    for (const file of ['src/main.ts', 'bin/server.js', 'package.json', 'migrations/index.ts'])
      expect(isIgnored(file), file).toBe(false);
  });
});

describe('docker-compose.yml', () => {
  const db = services.db;
  const idp = services.idp;

  it('has a PostgreSQL 15+ database on a named volume, with a readiness check', () => {
    expect(db).toBeDefined();
    const major = /^postgres:(\d+)/.exec(db?.image ?? '')?.[1];
    expect(Number(major)).toBeGreaterThanOrEqual(15);

    const mounts = (db?.volumes ?? []).map((volume) =>
      typeof volume === 'string'
        ? { source: volume.split(':')[0], target: volume.split(':')[1] }
        : { source: volume.source, target: volume.target },
    );
    const data = mounts.find((mount) => mount.target === '/var/lib/postgresql/data');
    expect(data?.source).toMatch(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/); // a named volume, not a host path
    expect(Object.keys(compose.volumes ?? {})).toContain(data?.source);

    const check = healthcheckCommand(db).join(' ');
    expect(check).toContain('pg_isready');
    const env = environmentOf(db, shellEnv);
    expect(check).toContain(`-U ${env.POSTGRES_USER}`);
    expect(check).toContain(`-d ${env.POSTGRES_DB}`);
    expect(db?.healthcheck).toMatchObject({
      interval: expect.any(String),
      timeout: expect.any(String),
      retries: expect.any(Number),
    });
  });

  it('builds the service from this directory and publishes port 3000', () => {
    expect(idp).toBeDefined();
    const context = typeof idp?.build === 'string' ? idp.build : idp?.build?.context;
    expect(path.normalize(context ?? '')).toBe('.');
    const targets = (idp?.ports ?? []).map((port) =>
      typeof port === 'object'
        ? String(port.target)
        : (String(port).split(':').at(-1) as string).split('/')[0],
    );
    expect(targets).toContain(runtimeEnv.PORT);
  });

  it('points the service at the db service with the credentials the database is created with', () => {
    const env = environmentOf(idp, shellEnv);
    const url = new URL(env.DATABASE_URL as string);
    expect(url.protocol).toMatch(/^postgres(ql)?:$/);
    expect(url.hostname).toBe('db');
    expect(url.port || '5432').toBe('5432');
    const dbEnv = environmentOf(db, shellEnv);
    expect(decodeURIComponent(url.username)).toBe(dbEnv.POSTGRES_USER);
    expect(decodeURIComponent(url.password)).toBe(dbEnv.POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${dbEnv.POSTGRES_DB}`);

    // A password set in the shell reaches both services.
    const custom = { ...shellEnv, POSTGRES_PASSWORD: 'another-password' };
    expect(new URL(environmentOf(idp, custom).DATABASE_URL as string).password).toBe('another-password');
    expect(environmentOf(db, custom).POSTGRES_PASSWORD).toBe('another-password');
  });

  it('starts once the database is healthy, and restarts', () => {
    const dependsOn = idp?.depends_on;
    expect(Array.isArray(dependsOn)).toBe(false);
    expect((dependsOn as Record<string, { condition?: string }>).db?.condition).toBe('service_healthy');
    expect(idp?.restart).toMatch(/^(unless-stopped|always|on-failure)/);
  });

  it('checks /health/ready exactly as the image does', () => {
    const command = healthcheckCommand(idp);
    expect(command.join(' ')).toContain('/health/ready');
    const image = of(runtime, 'HEALTHCHECK')[0] as Instruction;
    expect(command).toEqual(['CMD', ...execForm(image.args)]);
  });

  it('gives the image a configuration that NODE_ENV=production accepts', () => {
    const env = { ...runtimeEnv, ...environmentOf(idp, shellEnv) };
    const config = loadConfig(env);
    expect(config).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: 3000 });
    expect(config.cookieSecretIsDefault).toBe(false);
    expect(config.PUBLIC_URL).toBe('http://localhost:3000');
    expect(config.DATABASE_URL).toMatch(/@db:5432\//);
    expect(() => assertServable(config)).not.toThrow();
  });

  it('refuses to start the stack without a COOKIE_SECRET instead of running with a default', () => {
    expect(() => environmentOf(idp, {})).toThrow(/COOKIE_SECRET/);
    expect(() => environmentOf(idp, { COOKIE_SECRET: '' })).toThrow(/COOKIE_SECRET/);
  });
});

describe('what production needs, passed on by both compose files from the shell or .env', () => {
  const files = ['docker-compose.yml', 'docker-compose.instances.yml'];
  const idpOf = (file: string) =>
    (parseYaml(read(file)) as { services: Record<string, Service> }).services.idp;
  const given = {
    SMTP_URL: 'smtps://mailer:p4ss@smtp.example.com:465',
    MAIL_FROM: 'Northwind ID <id@northwind.example>',
    METRICS_TOKEN: 'm'.repeat(40),
    BRAND_NAME: 'Northwind ID',
    BRAND_LOGO_URL: 'https://static.northwind.example/logo.svg',
    BRAND_ACCENT_COLOR: '#0b5d1e',
    COOKIE_SECRET_PREVIOUS: 'p'.repeat(40),
  };

  it.each(files)('%s passes each mail, metrics and branding setting, and the service reads it', (file) => {
    const env = { ...runtimeEnv, ...environmentOf(idpOf(file), { ...shellEnv, ...given }) };
    expect(env).toMatchObject(given);
    const config = loadConfig(env);
    expect(config).toMatchObject({ ...given, COOKIE_SECRET_PREVIOUS: [given.COOKIE_SECRET_PREVIOUS] });
    expect(() => assertServable(config)).not.toThrow();

    const disabled = environmentOf(idpOf(file), {
      COOKIE_SECRET: shellEnv.COOKIE_SECRET,
      MAIL_DISABLED: '1',
    });
    expect(disabled.MAIL_DISABLED).toBe('1');
    expect(loadConfig({ ...runtimeEnv, ...disabled }).MAIL_DISABLED).toBe(true);
  });

  it.each(files)('%s passes an unset one empty, which the service reads as unset', (file) => {
    const env = environmentOf(idpOf(file), { COOKIE_SECRET: shellEnv.COOKIE_SECRET });
    for (const name of [...Object.keys(given), 'MAIL_DISABLED']) expect(env[name], name).toBe('');
    const config = loadConfig({ ...runtimeEnv, ...env, MAIL_DISABLED: '1' });
    expect(config).toMatchObject({ BRAND_NAME: 'idp', METRICS_TOKEN: undefined, SMTP_URL: undefined });
  });

  it.each(files)(
    '%s with neither SMTP_URL nor MAIL_DISABLED=1 makes a server that refuses to start',
    (file) => {
      const env = environmentOf(idpOf(file), { COOKIE_SECRET: shellEnv.COOKIE_SECRET });
      expect(() => assertServable(loadConfig({ ...runtimeEnv, ...env }))).toThrow(
        /NODE_ENV=production: SMTP_URL must be set .*or MAIL_DISABLED=1/,
      );
    },
  );

  it('.env.example lists exactly the variables the compose files read, each with a comment', () => {
    const read = new Set(files.flatMap((file) => [...interpolated(file)]));
    expect(Object.keys(envExample).sort()).toEqual([...read].sort());
    const lines = readFileSync(path.join(root, '.env.example'), 'utf8').split(/\r?\n/);
    for (const name of Object.keys(envExample)) {
      const at = lines.findIndex((line) => line.startsWith(`${name}=`));
      expect(lines[at - 1], `the line above ${name}= explains it`).toMatch(/^#/);
    }
  });

  it('.env.example, copied to .env with the required values filled in, starts both stacks', () => {
    // Its values are empty: nothing but what the operator fills in reaches the service.
    expect(Object.values(envExample).every((value) => value === '')).toBe(true);
    for (const file of files) {
      expect(() => environmentOf(idpOf(file), envExample)).toThrow(/COOKIE_SECRET/);
      const filled = { ...envExample, COOKIE_SECRET: shellEnv.COOKIE_SECRET, MAIL_DISABLED: '1' };
      const config = loadConfig({ ...runtimeEnv, ...environmentOf(idpOf(file), filled) });
      expect(() => assertServable(config)).not.toThrow();
      expect(config.MAIL_DISABLED).toBe(true);
    }
  });
});

describe('docker-compose.instances.yml (several instances behind a load balancer)', () => {
  const several = parseYaml(read('docker-compose.instances.yml')) as {
    services?: Record<string, Service & { deploy?: { replicas?: number }; networks?: unknown }>;
    networks?: Record<string, { ipam?: { config?: Array<{ subnet?: string }> } }>;
  };
  const all = several.services ?? {};
  const idp = all.idp;
  const lb = all.lb;
  const nginx = read('deploy/nginx.conf');

  it('runs at least two instances of the image, none of them published directly', () => {
    const context = typeof idp?.build === 'string' ? idp.build : idp?.build?.context;
    expect(path.normalize(context ?? '')).toBe('.');
    expect(idp?.deploy?.replicas).toBeGreaterThanOrEqual(2);
    expect(idp?.ports ?? []).toEqual([]);
    expect(healthcheckCommand(idp)).toEqual(healthcheckCommand(services.idp));
  });

  it('gives every instance the same production configuration, on one PostgreSQL and one Redis', () => {
    const env = { ...runtimeEnv, ...environmentOf(idp, shellEnv) };
    const config = loadConfig(env);
    expect(config.NODE_ENV).toBe('production');
    expect(config.DATABASE_URL).toMatch(/@db:5432\/idp$/);
    expect(config.REDIS_URL).toBe('redis://redis:6379');
    expect(all.redis?.image).toMatch(/^redis:\d/);
    expect(healthcheckCommand(all.redis).join(' ')).toContain('ping');
    expect(all.db?.image).toBe(services.db?.image);
    const dependsOn = idp?.depends_on as Record<string, { condition?: string }>;
    expect(dependsOn.db?.condition).toBe('service_healthy');
    expect(dependsOn.redis?.condition).toBe('service_healthy');
    expect(() => environmentOf(idp, {})).toThrow(/COOKIE_SECRET/);
  });

  it('trusts X-Forwarded-For from the load balancer alone, which sets it', () => {
    const lbAddress = (lb?.networks as Record<string, { ipv4_address?: string }> | undefined)?.internal
      ?.ipv4_address;
    const subnet = several.networks?.internal?.ipam?.config?.[0]?.subnet as string;
    expect(lbAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(subnet.split('.').slice(0, 3)).toEqual((lbAddress as string).split('.').slice(0, 3));
    expect(environmentOf(idp, shellEnv).TRUST_PROXY).toBe(lbAddress);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-Proto \$scheme;/);
  });

  it('balances over every instance, found again by Docker DNS, and publishes port 3000', () => {
    expect(lb?.image).toMatch(/^nginx:1\.(2[89]|[3-9]\d)/); // `resolve` in upstreams: nginx 1.27.3+
    expect(lb?.ports).toContain('3000:80');
    expect(lb?.volumes).toContain('./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro');
    expect(nginx).toMatch(/resolver 127\.0\.0\.11 /);
    expect(nginx).toMatch(/server idp:3000 resolve/);
    expect(nginx).toMatch(/proxy_pass http:\/\/idp;/);
    expect(nginx).not.toMatch(/non_idempotent/); // a charge or a code exchange is never sent twice
  });
});
