// Properties of the simulation kernel: events in (time, insertion) order across processes, a
// model's events first at equal times and re-read after every change of its state (no stale
// event), a jump of the clock exactly when scheduling would have handled the resume next, and one
// sequence of events per scenario.
#include "sim/core/simulation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/check.hpp"

namespace ws {
namespace {

Time us(double v) { return Time::from_seconds(v * 1e-6); }

// Who handled what, when: the sequence a scenario produced.
using Log = std::vector<std::string>;

// A process that wakes at the given delays one after the other, logging each wake-up.
struct Sleeper final : EventHandler {
  Sleeper(Simulation& kernel, std::string who, std::vector<Time> waits, Log& into)
      : sim(kernel), name(std::move(who)), delays(std::move(waits)), log(into), id(kernel.add_handler(*this)) {}
  void start() { sim.schedule(sim.now() + delays[0], id, 0, 0); }
  void on_event(Simulation& s, std::uint32_t, std::uint64_t step) override {
    log.push_back(name + "@" + std::to_string(s.now().ps()));
    if (step + 1 < delays.size()) s.schedule(s.now() + delays[step + 1], id, 0, step + 1);
  }
  Simulation& sim;
  std::string name;
  std::vector<Time> delays;
  Log& log;
  int id;
};

// A tank that drains at a rate anyone may change: its next event (empty) follows from its state,
// as a flow's completion follows from its share.
struct Tank final : TimedModel {
  double level = 0;  // units
  double rate = 0;   // units per second
  Time since;        // level is as of this time
  bool empty_logged = false;
  Log* log = nullptr;

  void set_rate(Time now, double r) {
    level -= rate * (now - since).seconds();
    since = now;
    rate = r;
  }
  Time next_event_time() override {
    if (empty_logged || rate <= 0) return Time::max();
    return since + Time::from_seconds(level / rate);
  }
  void advance(Simulation& sim, Time t) override {
    empty_logged = true;
    log->push_back("tank empty@" + std::to_string(t.ps()));
    EXPECT_EQ(sim.now(), t);
  }
};

TEST(Simulation, ProcessesInterleaveInTimeThenInsertionOrder) {
  Simulation sim;
  Log log;
  Sleeper a(sim, "a", {us(1), us(2), us(1)}, log);  // wakes at 1, 3, 4 us
  Sleeper b(sim, "b", {us(3), us(1)}, log);         // wakes at 3, 4 us
  a.start();
  b.start();
  sim.run();
  // At 3 us b's event was queued at time 0, a's at 1 us: b first; so at 4 us b's (queued by b's
  // handler at 3 us) comes before a's (queued after it, by a's).
  EXPECT_EQ(log, (Log{"a@1000000", "b@3000000", "a@3000000", "b@4000000", "a@4000000"}));
  EXPECT_EQ(sim.now(), us(4));
  EXPECT_EQ(sim.events_handled(), 5u);
}

TEST(Simulation, AModelsNextEventIsReadAfterEveryChangeAndGoesFirstAtEqualTimes) {
  Simulation sim;
  Log log;
  Tank tank;
  tank.level = 10;
  tank.rate = 1e6;  // empty at 10 us
  tank.log = &log;
  sim.add_model(tank);
  // A process halves the rate at 4 us: 6 units left at 0.5e6/s, empty at 16 us.
  struct Valve final : EventHandler {
    Tank& tank;
    Log& log;
    explicit Valve(Tank& t, Log& l) : tank(t), log(l) {}
    void on_event(Simulation& s, std::uint32_t what, std::uint64_t) override {
      log.push_back("valve " + std::to_string(what) + "@" + std::to_string(s.now().ps()));
      if (what == 0) tank.set_rate(s.now(), 0.5e6);
    }
  } valve(tank, log);
  const int v = sim.add_handler(valve);
  sim.schedule(us(4), v, 0);
  sim.schedule(us(16), v, 1);  // at the tank's new empty time: the model goes first
  sim.run();
  EXPECT_EQ(log, (Log{"valve 0@4000000", "tank empty@16000000", "valve 1@16000000"}));
}

TEST(Simulation, JumpMovesTheClockOnlyWhenNothingIsPendingUpToIt) {
  Simulation sim;
  Log log;
  Sleeper a(sim, "a", {us(5)}, log);
  a.start();
  EXPECT_TRUE(sim.jump_to(us(4)));
  EXPECT_EQ(sim.now(), us(4));
  EXPECT_FALSE(sim.jump_to(us(5))) << "an event at 5 us was queued first";
  EXPECT_FALSE(sim.jump_to(us(6)));
  EXPECT_EQ(sim.now(), us(4));
  Tank tank;
  tank.level = 1;
  tank.rate = 1e6;
  tank.since = us(4);  // empty at 5 us
  tank.log = &log;
  sim.add_model(tank);
  sim.run();
  EXPECT_EQ(log, (Log{"tank empty@5000000", "a@5000000"}));
  EXPECT_TRUE(sim.jump_to(us(7)));
  EXPECT_THROW(sim.schedule(us(6), a.id), InternalError) << "the past";
}

TEST(Simulation, RunUntilStopsAtTheConditionAndOneScenarioRunsOneSequence) {
  auto scenario = [](int stop_after, Log& log) {
    Simulation sim;
    Sleeper a(sim, "a", {us(1), us(1), us(1), us(1)}, log);
    Sleeper b(sim, "b", {us(2), us(2)}, log);
    a.start();
    b.start();
    const bool reached = sim.run_until([&] { return log.size() >= static_cast<std::size_t>(stop_after); });
    EXPECT_TRUE(reached);
    EXPECT_EQ(log.size(), static_cast<std::size_t>(stop_after));
    sim.run();
    return sim.now();
  };
  Log first, second;
  EXPECT_EQ(scenario(3, first), us(4));
  EXPECT_EQ(scenario(1, second), us(4));
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.size(), 6u);
  Simulation idle;
  EXPECT_FALSE(idle.run_until([] { return false; }));
  EXPECT_FALSE(idle.run_one());
}

}  // namespace
}  // namespace ws
