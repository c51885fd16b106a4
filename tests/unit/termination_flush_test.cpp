// The tracer writes its trace when the program is terminated by a signal, and the program still
// dies by that signal. Each case runs in a forked child (the handlers are process-wide), which the
// test terminates and then inspects: how it ended, and whether the trace writer ran.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tracer/termination_flush.hpp"

namespace kernscope::tracer {
namespace {

std::string g_marker;  // the file the child's "trace writer" creates

void write_marker() {
  if (FILE* f = std::fopen(g_marker.c_str(), "w")) {
    std::fputs("written", f);
    std::fclose(f);
  }
}

void never_finishes() {
  while (true) pause();
}

void exit_seven(int) { _exit(7); }

struct Ended {
  int status = 0;
  double seconds = 0;
};

// Forks a child that runs `setup`, reports ready through a pipe and idles; the parent sends
// `signal_number` and waits for the child to end.
template <class Setup>
Ended terminate_child(Setup setup, int signal_number) {
  int ready[2];
  EXPECT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    alarm(20);  // a handler that failed to end the child would leave it idling: SIGALRM ends it
    close(ready[0]);
    setup();
    char one = 1;
    if (write(ready[1], &one, 1) != 1) _exit(90);
    while (true) pause();
  }
  close(ready[1]);
  char got = 0;
  EXPECT_EQ(read(ready[0], &got, 1), 1);
  close(ready[0]);
  const auto begin = std::chrono::steady_clock::now();
  kill(child, signal_number);
  Ended ended;
  EXPECT_EQ(waitpid(child, &ended.status, 0), child);
  ended.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return ended;
}

class TerminationFlush : public ::testing::Test {
 protected:
  void SetUp() override {
    g_marker = (std::filesystem::temp_directory_path() /
                ("kernscope_termination_" + std::to_string(getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                   .string();
    std::filesystem::remove(g_marker);
  }
  void TearDown() override { std::filesystem::remove(g_marker); }
};

TEST_F(TerminationFlush, SigtermWritesTheTraceAndTheProgramStillDiesBySigterm) {
  const Ended ended = terminate_child([] { if (finish_on_termination(write_marker, std::chrono::seconds(5)) != 3) _exit(91); }, SIGTERM);
  ASSERT_TRUE(WIFSIGNALED(ended.status)) << "status " << ended.status;
  EXPECT_EQ(WTERMSIG(ended.status), SIGTERM);
  EXPECT_TRUE(std::filesystem::exists(g_marker));
}

TEST_F(TerminationFlush, SigintAndSighupToo) {
  for (int s : {SIGINT, SIGHUP}) {
    std::filesystem::remove(g_marker);
    const Ended ended = terminate_child([] { finish_on_termination(write_marker, std::chrono::seconds(5)); }, s);
    ASSERT_TRUE(WIFSIGNALED(ended.status)) << "signal " << s;
    EXPECT_EQ(WTERMSIG(ended.status), s);
    EXPECT_TRUE(std::filesystem::exists(g_marker)) << "signal " << s;
  }
}

TEST_F(TerminationFlush, AHandlerOfTheProgramIsLeftAlone) {
  const Ended ended = terminate_child(
      [] {
        signal(SIGTERM, exit_seven);
        if (finish_on_termination(write_marker, std::chrono::seconds(5)) != 2) _exit(92);  // SIGINT, SIGHUP only
      },
      SIGTERM);
  ASSERT_TRUE(WIFEXITED(ended.status)) << "status " << ended.status;
  EXPECT_EQ(WEXITSTATUS(ended.status), 7);
  EXPECT_FALSE(std::filesystem::exists(g_marker));
}

TEST_F(TerminationFlush, AnIgnoredSignalStaysIgnored) {
  // SIGHUP ignored by the program: the child survives it; SIGKILL then ends the test's child.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    alarm(20);
    signal(SIGHUP, SIG_IGN);
    finish_on_termination(write_marker, std::chrono::seconds(5));
    kill(getpid(), SIGHUP);
    char one = 1;
    if (write(ready[1], &one, 1) != 1) _exit(90);
    while (true) pause();
  }
  close(ready[1]);
  char got = 0;
  EXPECT_EQ(read(ready[0], &got, 1), 1);  // reached only if SIGHUP did not end the child
  close(ready[0]);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_FALSE(std::filesystem::exists(g_marker));
}

TEST_F(TerminationFlush, AForkedChildDiesAtOnceWithoutWritingTheParentsTrace) {
  // The child installs the handlers with a writer that never finishes, then forks a grandchild and
  // terminates it: the grandchild must die by SIGTERM at once (it has no waiting thread; with the
  // parent's handler it would wait the whole 10 s bound). The child reports through its exit code.
  const pid_t child = fork();
  if (child == 0) {
    alarm(30);
    finish_on_termination(never_finishes, std::chrono::seconds(10));
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      while (true) pause();
    }
    usleep(100000);
    const auto begin = std::chrono::steady_clock::now();
    kill(grandchild, SIGTERM);
    int status = 0;
    waitpid(grandchild, &status, 0);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) _exit(3);
    _exit(seconds < 2.0 ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: not killed by SIGTERM; 4: took the bound";
}

TEST_F(TerminationFlush, AWriterThatNeverFinishesDelaysTheEndByTheBoundOnly) {
  const Ended ended = terminate_child([] { finish_on_termination(never_finishes, std::chrono::milliseconds(300)); }, SIGTERM);
  ASSERT_TRUE(WIFSIGNALED(ended.status));
  EXPECT_EQ(WTERMSIG(ended.status), SIGTERM);
  EXPECT_GE(ended.seconds, 0.25);
  EXPECT_LT(ended.seconds, 5.0);
}

}  // namespace
}  // namespace kernscope::tracer
