/**
 * The userinfo claims in the API's order, written out rather than read from src/modules/oauth/scopes.ts
 * so that the tests pin the contract instead of repeating the code.
 */
export const USERINFO_CLAIMS = [
  'sub',
  'id',
  'name',
  'nickname',
  'preferred_username',
  'username',
  'display_name',
  'picture',
  'avatar_url',
  'game',
  'game_name',
  'game_linked',
  'tag',
  'email',
  'email_verified',
  'verified',
  'verification_level',
  'verification_tier',
  'verified_badge',
];
