export {
  MemoryTree,
  MemoryAuthorityOptions,
  createMemoryAuthorities,
  FileAuthorityErrorCode,
  FileAuthorityError,
  FileAuthority,
  DirectoryEntry,
  DirectoryListing,
  FileStat,
  VersionedBytes,
  RangeRead,
  WalkEntry,
  WalkListing,
  WriteOptions,
  ReadAuthority,
  WriteAuthority
} from '../index'
