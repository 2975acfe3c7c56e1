/** The texts of `/device` (RFC 8628): enter the code a device shows, confirm, allow or deny. */
export interface DeviceTexts {
  heading: string;
  intro: string;
  codeLabel: string;
  codeHint: string;
  continue: string;
  errors: Record<'wrong' | 'locked' | 'busy' | 'missing', string>;
  confirmHeading: (app: string) => string;
  /** The device's own words (its User-Agent), shown so that a person can tell what asks. */
  deviceSays: string;
  unknownDevice: string;
  /**
   * RFC 8628 §5.4: the code must be the one on the person's own screen. The text before and after
   * the code, which the page keeps on one line.
   */
  checkCode: readonly [before: string, after: string];
  allowedBefore: string;
  allowedTitle: string;
  allowedText: (app: string) => string;
  deniedTitle: string;
  deniedText: (app: string) => string;
  expiredText: string;
  another: string;
}

/** The titles of the pages of `/device`. */
export type DevicePageTitles = Record<'device' | 'device-confirm' | 'device-done', string>;
