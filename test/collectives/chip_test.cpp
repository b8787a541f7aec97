// The chip's buffer: what copy and copy_local do to a slot's content and size.
#include <catch2/catch.hpp>

#include "collectives/chip.hpp"
#include "idle_transport.hpp"

using namespace ultrasim;

using NoFabric = ultrasim::test::IdleTransport;  // these tests only move data between its own slots

TEST_CASE("a copied piece brings its size with it, so a part parked in another's slot keeps its own") {
  NoFabric fabric;
  Chip chip(fabric, {201, 200, 200}, {contribution_of(0, 0), {}, {}}, std::nullopt);
  auto arrived = std::make_shared<Request>();
  arrived->message.pieces.push_back(Piece{1, 201, contribution_of(4, 2)});
  chip.copy(arrived);
  CHECK(chip.slots()[1] == contribution_of(4, 2));
  CHECK(chip.slot_bytes(1) == 201);
  CHECK(chip.slot_bytes(2) == 200);  // untouched
  chip.copy_local(1, 2);
  CHECK(chip.slots()[2] == contribution_of(4, 2));
  CHECK(chip.slot_bytes(2) == 201);
}

TEST_CASE("reducing into a slot keeps the slot's size") {
  NoFabric fabric;
  Chip chip(fabric, {100}, {contribution_of(0, 0)}, std::nullopt);
  auto arrived = std::make_shared<Request>();
  arrived->message.pieces.push_back(Piece{0, 100, contribution_of(1, 0)});
  chip.reduce(arrived);
  CHECK(chip.slots()[0].count == 2);
  CHECK(chip.slot_bytes(0) == 100);
}
