# File Cloud's optional native modules (scripts/build-native.mjs builds them at npm's postinstall).
# OpenSSL is Node's own: its headers come with Node's, its symbols from the node binary.
{
  'targets': [
    {
      'target_name': 'gcm_part',
      'sources': ['gcm-part.c'],
      'cflags': ['-O2', '-Wall', '-Wextra'],
    },
    {
      'target_name': 'fs_ops',
      'sources': ['fs-ops.c'],
      'cflags': ['-O2', '-Wall', '-Wextra'],
    },
  ],
}
