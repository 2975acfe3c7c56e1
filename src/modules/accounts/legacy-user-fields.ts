import type { User } from './user.js';

/**
 * The snake_case fields the profile presenters read, for a `User`, until presentUserinfo takes a
 * `User` itself (then this file goes).
 */
export function legacyUserFields(user: User) {
  return {
    id: user.id,
    username: user.username,
    display_name: user.displayName,
    avatar_url: user.avatarUrl,
    email: user.email,
    email_verified: user.emailVerified,
    verification_level: user.verificationLevel,
    game_name: user.gameName,
    game_url: user.gameUrl,
    tag_label: user.tagLabel,
    tag_kind: user.tagKind,
    tag_slug: user.tagSlug,
  };
}
