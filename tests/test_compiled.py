"""Reading JAX's compiled programs (gs_course.measurement.compiled): kernels a loop iteration
launches, and the blocks the Pallas kernel reads for each block it writes."""

from gs_course.measurement import compiled

HLO = """HloModule m

%fused_a (p: f32[4]) -> f32[4] {
  ROOT %r = f32[4] add(%p, %p)
}

%body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
  %x = f32[4] get-tuple-element(%s), index=1
  %fusion.1 = f32[4] fusion(%x), kind=kLoop, calls=%fused_a
  %fusion.2 = f32[4] fusion(%fusion.1), kind=kLoop, calls=%fused_a
  %cc = f32[4] custom-call(%fusion.2), custom_call_target="__gpu$xla.gpu.triton"
  ROOT %t = (s32[], f32[4]) tuple(%i, %cc)
}

%cond (s: (s32[], f32[4])) -> pred[] {
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

ENTRY %main (a: f32[4]) -> f32[4] {
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body
  %fusion.9 = f32[4] fusion(%a), kind=kLoop, calls=%fused_a
  ROOT %out = f32[4] get-tuple-element(%w), index=1
}
"""


def test_kernels_are_counted_in_the_loop_body_only():
    assert compiled.kernels_in(HLO) == 3, "two fusions and the Triton call of the body; not the entry's fusion"
    no_loop = HLO.replace("body=%body", "")
    assert compiled.kernels_in(no_loop) == 4, "without a loop, the whole program"


def test_the_pallas_kernel_reads_twenty_blocks_for_each_block_it_writes():
    """Nine shifted blocks of U and of V for the window sums, and the centre of each."""
    pallas = compiled.report("pallas", 40, 64, 4)
    assert pallas["block_reads_per_block"] == 20
    stacked = compiled.report("stacked", 40, 64, 4)
    assert stacked["block_reads_per_block"] is None and stacked["kernels_per_step"] >= 1
    assert stacked["state_bytes"] == 2 * 40 * 64 * 4
