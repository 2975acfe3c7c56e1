import type { Selectable } from 'kysely';
import type { UsersTable } from '../../db/schema.js';

/** A user as every layer above the repositories sees one: never the password hash. */
export interface User {
  id: number;
  username: string;
  email: string | null;
  emailVerified: boolean;
  /**
   * The account confirmed its address after another account had confirmed the same one: the
   * confirmation stands, but `email_verified` is not released to sites (profile.presenter.ts).
   */
  emailClaimWithheld: boolean;
  displayName: string | null;
  verificationLevel: number;
  avatarUrl: string | null;
  gameName: string | null;
  gameUrl: string | null;
  tagLabel: string | null;
  tagKind: string | null;
  tagSlug: string | null;
  disabledAt: Date | null;
  /** When the account was deleted (its profile cleared; disabled too), or null. */
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** For repositories only: a `users` row (or the `users` columns of a joined row) as a `User`. */
export function toUser(row: Omit<Selectable<UsersTable>, 'password_hash' | 'username_skeleton'>): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    emailVerified: row.email_verified,
    emailClaimWithheld: row.email_claim_withheld,
    displayName: row.display_name,
    verificationLevel: row.verification_level,
    avatarUrl: row.avatar_url,
    gameName: row.game_name,
    gameUrl: row.game_url,
    tagLabel: row.tag_label,
    tagKind: row.tag_kind,
    tagSlug: row.tag_slug,
    disabledAt: row.disabled_at,
    deletedAt: row.deleted_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The columns `toUser` reads, for a repository's select list. */
export const USER_COLUMNS = [
  'id',
  'username',
  'email',
  'email_verified',
  'email_claim_withheld',
  'display_name',
  'verification_level',
  'avatar_url',
  'game_name',
  'game_url',
  'tag_label',
  'tag_kind',
  'tag_slug',
  'disabled_at',
  'deleted_at',
  'created_at',
  'updated_at',
] as const;
