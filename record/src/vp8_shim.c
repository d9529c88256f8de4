/* The VP8 encoder of libvpx behind four calls, so that Rust never lays out
 * libvpx's structs itself: they are compiled here, from the system's headers.
 * Written for Wayrig's recordings: realtime, one thread, I420 in, packets out. */

#include <stdint.h>
#include <stdlib.h>
#include <vpx/vp8cx.h>
#include <vpx/vpx_encoder.h>

struct wr_vp8 {
    vpx_codec_ctx_t codec;
    vpx_codec_iter_t iter;
    unsigned width, height;
};

/* An encoder for frames of width x height (both even), times in ms; NULL
 * and *error set when libvpx refuses. */
struct wr_vp8 *wr_vp8_open(unsigned width, unsigned height, unsigned bitrate_kbps,
                           const char **error) {
    vpx_codec_enc_cfg_t cfg;
    vpx_codec_err_t err = vpx_codec_enc_config_default(vpx_codec_vp8_cx(), &cfg, 0);
    if (err != VPX_CODEC_OK) {
        *error = vpx_codec_err_to_string(err);
        return NULL;
    }
    cfg.g_w = width;
    cfg.g_h = height;
    cfg.g_timebase.num = 1;
    cfg.g_timebase.den = 1000;
    cfg.g_threads = 1;
    cfg.g_lag_in_frames = 0;
    cfg.g_error_resilient = 0;
    cfg.rc_end_usage = VPX_VBR;
    cfg.rc_target_bitrate = bitrate_kbps;
    cfg.rc_min_quantizer = 4;
    cfg.rc_max_quantizer = 48;
    /* Key frames are asked for by the caller, by time. */
    cfg.kf_mode = VPX_KF_DISABLED;
    struct wr_vp8 *enc = calloc(1, sizeof *enc);
    if (enc == NULL) {
        *error = "out of memory";
        return NULL;
    }
    err = vpx_codec_enc_init(&enc->codec, vpx_codec_vp8_cx(), &cfg, 0);
    if (err != VPX_CODEC_OK) {
        *error = vpx_codec_err_to_string(err);
        free(enc);
        return NULL;
    }
    /* The fastest realtime setting: recording must not take the apps' CPU. */
    vpx_codec_control(&enc->codec, VP8E_SET_CPUUSED, 16);
    vpx_codec_control(&enc->codec, VP8E_SET_SCREEN_CONTENT_MODE, 1);
    vpx_codec_control(&enc->codec, VP8E_SET_STATIC_THRESHOLD, 1);
    enc->width = width;
    enc->height = height;
    return enc;
}

/* Encode one I420 frame laid out as libvpx wraps it with alignment 1 (Y,
 * then U, then V, each plane's rows packed), shown at `pts` for `duration`
 * ms; a NULL frame flushes. Packets are then read with wr_vp8_packet. */
int wr_vp8_encode(struct wr_vp8 *enc, uint8_t *i420, int64_t pts, unsigned long duration,
                  int key, const char **error) {
    vpx_image_t image;
    vpx_image_t *frame = NULL;
    if (i420 != NULL) {
        if (vpx_img_wrap(&image, VPX_IMG_FMT_I420, enc->width, enc->height, 1, i420) == NULL) {
            *error = "cannot wrap the frame";
            return -1;
        }
        frame = &image;
    }
    vpx_codec_err_t err = vpx_codec_encode(&enc->codec, frame, pts, duration,
                                           key ? VPX_EFLAG_FORCE_KF : 0, VPX_DL_REALTIME);
    enc->iter = NULL;
    if (err != VPX_CODEC_OK) {
        const char *detail = vpx_codec_error_detail(&enc->codec);
        *error = detail != NULL ? detail : vpx_codec_err_to_string(err);
        return -1;
    }
    return 0;
}

/* The next packet of the last encode: 1 and its bytes, time and whether it
 * is a key frame; 0 when there are no more. */
int wr_vp8_packet(struct wr_vp8 *enc, const uint8_t **data, size_t *size, int64_t *pts,
                  int *key) {
    const vpx_codec_cx_pkt_t *pkt;
    while ((pkt = vpx_codec_get_cx_data(&enc->codec, &enc->iter)) != NULL) {
        if (pkt->kind != VPX_CODEC_CX_FRAME_PKT) {
            continue;
        }
        *data = pkt->data.frame.buf;
        *size = pkt->data.frame.sz;
        *pts = pkt->data.frame.pts;
        *key = (pkt->data.frame.flags & VPX_FRAME_IS_KEY) != 0;
        return 1;
    }
    return 0;
}

void wr_vp8_close(struct wr_vp8 *enc) {
    if (enc != NULL) {
        vpx_codec_destroy(&enc->codec);
        free(enc);
    }
}
