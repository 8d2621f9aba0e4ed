{
  "variables": {
    "aos_werror%": "<!(node scripts/gyp-flag.js werror)",
    "aos_sanitize%": "<!(node scripts/gyp-flag.js sanitize)"
  },
  "targets": [
    {
      "target_name": "agent_os",
      "sources": [
        "src/addon.c",
        "src/common/napi_util.c",
        "src/common/errname.c",
        "src/file_authority/segments.c",
        "src/file_authority/read.c",
        "src/file_authority/tree.c",
        "src/file_authority/version.c",
        "src/file_authority/napi.c",
        "src/node_lock/napi.c",
        "src/process/napi.c",
        "src/process/scope_napi.c"
      ],
      "include_dirs": ["src"],
      "defines": ["NAPI_VERSION=8"],
      "conditions": [
        ["OS!='win'", {
          "sources": [
            "src/file_authority/posix_walk.c",
            "src/file_authority/posix_read.c",
            "src/file_authority/posix_fdcache.c",
            "src/file_authority/posix_write.c",
            "src/file_authority/posix_append.c",
            "src/file_authority/posix_list.c",
            "src/file_authority/posix_parent.c",
            "src/file_authority/posix_stat.c",
            "src/file_authority/posix_remove.c",
            "src/file_authority/posix_mkdir.c",
            "src/file_authority/posix_rename.c",
            "src/file_authority/posix_tree.c",
            "src/file_authority/posix_beneath.c",
            "src/file_authority/posix_settle.c",
            "src/file_authority/posix_mgtime.c",
            "src/node_lock/posix.c",
            "src/process/posix.c"
          ],
          "cflags_c": [
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-fvisibility=hidden",
            "-fstack-protector-strong",
            "-D_FORTIFY_SOURCE=2"
          ]
        }],
        ["OS=='linux'", {
          "sources": ["src/process/linux.c", "src/process/scope_linux.c"],
          "defines": ["_GNU_SOURCE"],
          "ldflags": ["-Wl,-z,relro", "-Wl,-z,now", "-Wl,-z,noexecstack"]
        }],
        ["OS=='mac'", {
          "sources": ["src/process/darwin.c"],
          "defines": ["_DARWIN_C_SOURCE"],
          "xcode_settings": {
            "GCC_C_LANGUAGE_STANDARD": "c11",
            "GCC_SYMBOLS_PRIVATE_EXTERN": "YES",
            "MACOSX_DEPLOYMENT_TARGET": "11.0",
            "OTHER_CFLAGS": ["-Wall", "-Wextra", "-fstack-protector-strong"]
          }
        }],
        ["OS=='win'", {
          "sources": [
            "src/file_authority/win32.c",
            "src/file_authority/win32_stat.c",
            "src/file_authority/win32_remove.c",
            "src/file_authority/win32_mkdir.c",
            "src/file_authority/win32_rename.c",
            "src/file_authority/win32_list.c",
            "src/file_authority/win32_tree.c",
            "src/file_authority/win32_append.c",
            "src/node_lock/win32.c",
            "src/process/win32.c",
            "src/process/scope_win32.c"
          ],
          "defines": ["WIN32_LEAN_AND_MEAN", "UNICODE", "_UNICODE"],
          "libraries": ["ntdll.lib", "advapi32.lib"],
          "msvs_settings": {
            "VCCLCompilerTool": {
              "AdditionalOptions": ["/std:c11", "/W4", "/guard:cf", "/sdl"],
              "CompileAs": 1
            },
            "VCLinkerTool": { "AdditionalOptions": ["/guard:cf", "/DYNAMICBASE", "/CETCOMPAT"] }
          }
        }],
        ["aos_werror==1 and OS!='win'", {
          "cflags_c": ["-Werror"],
          "xcode_settings": { "GCC_TREAT_WARNINGS_AS_ERRORS": "YES" }
        }],
        ["aos_werror==1 and OS=='win'", {
          "msvs_settings": { "VCCLCompilerTool": { "WarnAsError": "true" } }
        }],
        ["aos_sanitize==1 and OS=='linux'", {
          "cflags_c": [
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=undefined",
            "-fno-omit-frame-pointer",
            "-g",
            "-O1"
          ],
          "cflags_c!": ["-D_FORTIFY_SOURCE=2"],
          "ldflags": ["-fsanitize=address,undefined"]
        }]
      ]
    },
    {
      "target_name": "agent_os_scope_helper",
      "conditions": [
        ["OS=='linux'", {
          "type": "executable",
          "sources": ["src/process/scope_helper.c", "src/process/scope_linux.c"],
          "include_dirs": ["src"],
          "defines": ["_GNU_SOURCE"],
          "cflags_c": ["-std=c11", "-Wall", "-Wextra", "-fstack-protector-strong", "-D_FORTIFY_SOURCE=2"],
          "ldflags": ["-Wl,-z,relro", "-Wl,-z,now", "-Wl,-z,noexecstack"],
          "conditions": [["aos_werror==1", { "cflags_c": ["-Werror"] }]]
        }],
        ["OS=='win'", {
          "type": "executable",
          "sources": ["src/process/scope_helper_win32.c"],
          "include_dirs": ["src"],
          "defines": ["WIN32_LEAN_AND_MEAN", "UNICODE", "_UNICODE"],
          "msvs_settings": {
            "VCCLCompilerTool": {
              "AdditionalOptions": ["/std:c11", "/W4", "/guard:cf", "/sdl"],
              "CompileAs": 1
            },
            "VCLinkerTool": { "SubSystem": 1, "AdditionalOptions": ["/guard:cf", "/DYNAMICBASE", "/CETCOMPAT"] }
          },
          "conditions": [["aos_werror==1", { "msvs_settings": { "VCCLCompilerTool": { "WarnAsError": "true" } } }]]
        }],
        ["OS!='linux' and OS!='win'", {
          "type": "none"
        }]
      ]
    }
  ]
}
