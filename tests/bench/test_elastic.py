from bench.studies.elastic import LayerCosts, plan_resident, predicted_latency

SLOW_DISK = LayerCosts(n_layers=10, layer_bytes=100, load_s=0.3, compute_s=0.1)


def test_resident_layers_lower_the_predicted_latency():
    latencies = [predicted_latency(SLOW_DISK, n) for n in range(11)]
    assert latencies == sorted(latencies, reverse=True)
    assert latencies[10] == 10 * 0.1  # all resident: compute only
    assert latencies[0] > 10 * 0.3  # all streamed: bound by the reads


def test_the_planner_keeps_the_fewest_layers_that_meet_the_target():
    n = plan_resident(SLOW_DISK, target_s=2.0, budget_bytes=10_000)
    assert predicted_latency(SLOW_DISK, n) <= 2.0 < predicted_latency(SLOW_DISK, n - 1)


def test_the_budget_caps_the_resident_layers():
    assert plan_resident(SLOW_DISK, target_s=0.5, budget_bytes=350) == 3
    fast_disk = LayerCosts(10, 100, load_s=0.01, compute_s=0.1)
    assert plan_resident(fast_disk, target_s=1.2, budget_bytes=10_000) == 0  # prefetch hides it
