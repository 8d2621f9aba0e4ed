// @scope/agent-os has no root export: import a subpath instead,
//   @scope/agent-os/file-authority, @scope/agent-os/file-authority/testing,
//   @scope/agent-os/node-lock or @scope/agent-os/process.
// package.json "types" names this file, which is deliberately not a module, so that
// under moduleResolution node10 (which reads no "exports") an import of the package
// root fails type-checking ("... no-root-export.d.ts' is not a module") as it fails
// at runtime (ERR_PACKAGE_PATH_NOT_EXPORTED). It declares nothing.
