// The layer-sample rule shared by tessel serve and tessel plan (engine/system/layer_sample.h), by hand.
#include <gtest/gtest.h>

#include "engine/system/layer_sample.h"

using tessel::layer_sample;
using tessel::sample_layers;

TEST(sample_layers, k_and_k_plus_one_layers_a_chunk_and_the_rest_by_the_difference) {
    // 40 layers on 2 pipeline stages, 1 a stage: runs of 2 and 4 layers; the model is 19 differences past the first.
    const layer_sample s = sample_layers(40, 2, 1);
    ASSERT_TRUE(s.active());
    EXPECT_EQ(s.low, 2);
    EXPECT_EQ(s.high, 4);
    EXPECT_DOUBLE_EQ(s.reach(), 19.0);
    EXPECT_DOUBLE_EQ(s.model(1.0, 1.5), 1.0 + 19 * 0.5);
    EXPECT_EQ(s.value(false), "2");
    EXPECT_EQ(s.value(true), "4");
}

TEST(sample_layers, a_model_no_larger_than_the_larger_run_is_simulated_whole) {
    EXPECT_FALSE(sample_layers(4, 2, 1).active());  // the larger run would be the model
    EXPECT_TRUE(sample_layers(5, 2, 1).active());
    EXPECT_FALSE(sample_layers(40, 1, 0).active());  // no sample asked for
    EXPECT_EQ(sample_layers(40, 1, 0).value(true), "");
}
