/* Stub of miniaudio.h for building Ollama from its Go module zip, which leaves out vendor/.
 * Only llama.cpp's tools/mtmd/mtmd-helper.cpp includes it, for audio decoding that a text model
 * never reaches; every function here fails with MA_ERROR so audio input is refused cleanly. */
#ifndef SERVEBENCH_MINIAUDIO_STUB_H
#define SERVEBENCH_MINIAUDIO_STUB_H
#include <stddef.h>
#include <stdint.h>
#ifndef MA_API
#define MA_API static
#endif
typedef int ma_result;
typedef uint32_t ma_uint32;
typedef uint64_t ma_uint64;
#define MA_SUCCESS 0
#define MA_ERROR (-1)
typedef enum { ma_format_unknown = 0, ma_format_f32 = 5 } ma_format;
typedef enum { ma_encoding_format_unknown = 0, ma_encoding_format_wav } ma_encoding_format;
typedef struct { ma_format format; ma_uint32 channels; ma_uint32 sampleRate; } ma_decoder_config;
typedef struct { int unused; } ma_decoder;
typedef struct { ma_encoding_format encodingFormat; ma_format format; ma_uint32 channels; ma_uint32 sampleRate; } ma_encoder_config;
typedef struct { int unused; } ma_encoder;
MA_API inline ma_decoder_config ma_decoder_config_init(ma_format f, ma_uint32 ch, ma_uint32 rate) { ma_decoder_config c = { f, ch, rate }; return c; }
MA_API inline ma_result ma_decoder_init_memory(const void *d, size_t n, const ma_decoder_config *c, ma_decoder *dec) { (void)d; (void)n; (void)c; (void)dec; return MA_ERROR; }
MA_API inline ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *dec, ma_uint64 *n) { (void)dec; *n = 0; return MA_ERROR; }
MA_API inline ma_result ma_decoder_read_pcm_frames(ma_decoder *dec, void *out, ma_uint64 n, ma_uint64 *read) { (void)dec; (void)out; (void)n; *read = 0; return MA_ERROR; }
MA_API inline ma_result ma_decoder_uninit(ma_decoder *dec) { (void)dec; return MA_SUCCESS; }
#endif
