// Report's next actions in words (render/advice_render.hpp), from actions built here by hand: the
// sentence a kind says with its facts, and the prediction after it as its basis allows.
#include <gtest/gtest.h>

#include "render/advice_render.hpp"

namespace kernscope {
namespace {

ReportAction graphs_action() {
  ReportAction a;
  a.kind = "cuda-graphs";
  a.part = "host.launch";
  a.time_ns = 8'000'000;
  a.facts.share = 0.8;
  a.facts.scope = {":measure:decode_step"};
  return a;
}

TEST(AdviceRender, AReplayedSavingIsSaidAsIsAnUpperBoundAtBest) {
  ReportAction a = graphs_action();
  a.predicted = PredictedStep{"TPOT", 10'000'000, 4'000'000, "replayed", "decode_step, 64 steps"};
  const std::string replayed = action_sentence(a);
  EXPECT_TRUE(replayed.starts_with("Capture the step in a CUDA graph")) << replayed;
  EXPECT_NE(replayed.find("for 80.0 % of the steady steps' time (:measure:decode_step)"), std::string::npos) << replayed;
  EXPECT_TRUE(replayed.ends_with(" (predicted: TPOT 10.000 -> 4.000 ms (-60.0 %, decode_step, 64 steps))")) << replayed;
  a.predicted->basis = "upper bound: the host's own work between calls removed";
  EXPECT_TRUE(action_sentence(a).ends_with(" (predicted at best: TPOT 10.000 -> 4.000 ms (-60.0 %, decode_step, 64 steps))"))
      << action_sentence(a);
}

TEST(AdviceRender, WithoutAPredictionTheSentenceSaysWhyExceptWhereItSaysSoItself) {
  ReportAction a = graphs_action();
  a.why_not_predicted = "no steps to replay";
  EXPECT_TRUE(action_sentence(a).ends_with(" (not predicted: no steps to replay)")) << action_sentence(a);
  a.facts.scope.clear();  // every step is one loop
  EXPECT_NE(action_sentence(a).find("for 80.0 % of the steps' time"), std::string::npos) << action_sentence(a);
  ReportAction find;
  find.kind = "find-steps";
  find.facts.steps_method = "none (no kernels)";
  find.why_not_predicted = "no steps: nothing to account or replay";
  EXPECT_EQ(action_sentence(find),
            "Mark the steps so that their time can be accounted and each fix priced: no steps were found (none (no kernels)); an "
            "NVTX range around each iteration (or --step-range NAME) makes them");
}

}  // namespace
}  // namespace kernscope
