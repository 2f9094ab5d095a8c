// Full-screen triangle for the present pass: three vertices from gl_VertexIndex, no vertex buffer.
#version 450

void main() {
  const vec2 corner = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
