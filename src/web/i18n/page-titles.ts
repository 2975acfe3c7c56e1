import type { DevicePageTitles } from './device-texts.js';
import type { UpstreamPageTitles } from './upstream-texts.js';

/** The title of each page (the document's <title>), by template. */
export type PageTitles = {
  signin: string;
  signup: string;
  account: string;
  consent: string;
  error: string;
  profile: string;
  password: string;
  export: string;
  delete: string;
  deleted: string;
  verify: string;
  verified: string;
  forgot: string;
  'forgot-sent': string;
  reset: string;
  'reset-done': string;
  'password-changed': string;
  email: string;
  security: string;
  'second-factor': string;
  reauthenticate: string;
  logout: string;
  'signed-out': string;
  home: string;
} & UpstreamPageTitles &
  DevicePageTitles;
