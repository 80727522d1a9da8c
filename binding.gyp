# node-gyp + MSVC build of the HTTP.SYS addon on Windows:
#   npx node-gyp rebuild   ->   build/Release/httpsys_native.node
# (node-gyp adds its own delay-load hook on Windows, so native/src/delay-load-hook.cc,
# which serves the mingw-w64 cross build in scripts/build-win.sh, is left out here.)
# On other systems there is nothing to build: the target is empty.
{
  'targets': [
    {
      'target_name': 'httpsys_native',
      'conditions': [
        ['OS=="win"', {
          'sources': [
            'native/src/addon.cc',
            'native/src/cert-store.cc',
            'native/src/diagnostics.cc',
            'native/src/http-api.cc',
            'native/src/job.cc',
            'native/src/property-call.cc',
            'native/src/queue.cc',
            'native/src/queue-io.cc',
            'native/src/request-convert.cc',
            'native/src/response-build.cc',
            'native/src/service-config.cc',
            'native/src/service-host.cc',
            'native/src/token.cc',
            'native/src/win32-errors.cc'
          ],
          'include_dirs': [
            "<!(node -p \"require('node-addon-api').include_dir\")"
          ],
          'defines': [
            'NAPI_VERSION=8',
            'NAPI_DISABLE_CPP_EXCEPTIONS',
            'UNICODE',
            '_UNICODE'
          ],
          'libraries': ['httpapi.lib', 'ws2_32.lib', 'advapi32.lib', 'crypt32.lib', 'ncrypt.lib', 'iphlpapi.lib'],
          'msvs_settings': {
            'VCCLCompilerTool': {
              'AdditionalOptions': ['/std:c++17', '/utf-8']
            }
          }
        }, {
          'type': 'none'
        }]
      ]
    }
  ]
}
