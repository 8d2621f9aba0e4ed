export {
  FileAuthorityErrorCode,
  FileAuthorityError,
  FileAuthority,
  OpenOptions,
  DirectoryEntry,
  DirectoryListing,
  ReadAuthority,
  WriteAuthority,
  openReadAuthority,
  openReadAuthoritySync,
  openWriteAuthority,
  openWriteAuthoritySync
} from '../index'
