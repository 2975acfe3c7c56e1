/**
 * The texts of RP-initiated logout: the confirmation a site's logout request may
 * need, and the page that says the browser is signed out. One object per language.
 */
export interface LogoutTexts {
  confirmHeading: string;
  /** A named site asks: its name, then its address. */
  clientAsks: (client: string) => string;
  /** No site could be named (no client_id, no hint). */
  unknownAsks: string;
  /** Followed by @username. */
  signedInAs: string;
  /** What signing out here means for the sites that use this account. */
  effect: string;
  signOut: string;
  staySignedIn: string;
  signedOutHeading: string;
  signedOutText: string;
  /** A way back to the site that asked, by its name. */
  backTo: (client: string) => string;
  signInAgain: string;
}
