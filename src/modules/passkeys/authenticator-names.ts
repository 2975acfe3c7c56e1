/**
 * Names of a few common passkey providers by their AAGUID (WebAuthn §6.5.1), to name a new passkey
 * when the user gives none. Attestation "none" leaves the AAGUID as the provider reports it; an
 * unknown or all-zero one gets "Passkey N" instead.
 */
const NAMES: Readonly<Record<string, string>> = {
  'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4': 'Google Password Manager',
  'adce0002-35bc-c60a-648b-0b25f1f05503': 'Chrome on Mac',
  'fbfc3007-154e-4ecc-8c0b-6e020557d7bd': 'iCloud Keychain',
  '08987058-cadc-4b81-b6e1-30de50dcbe96': 'Windows Hello',
  '9ddd1817-af5a-4672-a2b9-3e3dd95000a9': 'Windows Hello',
  '6028b017-b1d4-4c02-b4b3-afcdafc96bb2': 'Windows Hello',
  'bada5566-a7aa-401f-bd96-45619a55120d': '1Password',
  'd548826e-79b4-db40-a3d8-11116f7e8349': 'Bitwarden',
  '53414d53-554e-4700-0000-000000000000': 'Samsung Pass',
};

/** The provider's name for an AAGUID, if it is one we know. */
export function nameOfAuthenticator(aaguid: string): string | undefined {
  return NAMES[aaguid.toLowerCase()];
}
