export {
  MemoryTree,
  MemoryAuthorityOptions,
  createMemoryAuthorities,
  FileAuthorityErrorCode,
  FileAuthorityError,
  FileAuthority,
  DirectoryEntry,
  DirectoryListing,
  ReadAuthority,
  WriteAuthority
} from '../index'
