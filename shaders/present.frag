// Present pass: draws the frame into its letterbox rectangle, bars elsewhere (see present_pass.h).
#version 450

layout(set = 0, binding = 0) uniform sampler2D frame_image;

layout(push_constant) uniform PresentConstants {
  vec4 rect;        // letterbox rectangle in target pixels: x, y, width, height
  vec4 bar_color;   // colour outside the rectangle
  ivec2 frame_size; // source frame size in texels
  int filter_mode;  // 0: nearest (texelFetch, exact for integer scales), 1: bilinear
} pc;

layout(location = 0) out vec4 out_color;

void main() {
  const vec2 local = gl_FragCoord.xy - pc.rect.xy;
  if (any(lessThan(local, vec2(0.0))) || any(greaterThanEqual(local, pc.rect.zw))) {
    out_color = pc.bar_color;
    return;
  }
  if (pc.filter_mode == 0) {
    // Integer texel arithmetic so an integer upscale is pixel-exact on every driver.
    const vec2 texel = floor(local * vec2(pc.frame_size) / pc.rect.zw);
    const ivec2 coord = clamp(ivec2(texel), ivec2(0), pc.frame_size - 1);
    out_color = texelFetch(frame_image, coord, 0);
  } else {
    out_color = texture(frame_image, local / pc.rect.zw);
  }
}
